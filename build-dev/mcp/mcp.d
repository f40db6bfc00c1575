build-dev/mcp/mcp.o: mcp/mcp.c mcp/../manifest/netrule.h \
 mcp/../manifest/manifest.h mcp/../manifest/../util/util.h \
 mcp/../manifest/mcpconf.h mcp/../manifest/yaml.h \
 mcp/../manifest/../util/secrets.h mcp/../manifest/../util/util.h \
 mcp/../manifest/schema.h mcp/../util/cancel.h mcp/mcp.h \
 mcp/../manifest/manifest.h mcp/../sandbox/sandbox.h \
 mcp/../sandbox/../manifest/manifest.h mcp/../sandbox/../net/egress.h \
 mcp/../sandbox/../net/../manifest/manifest.h mcp/rpc.h \
 mcp/../util/jsonb.h mcp/../util/util.h mcp/../net/egress.h
mcp/../manifest/netrule.h:
mcp/../manifest/manifest.h:
mcp/../manifest/../util/util.h:
mcp/../manifest/mcpconf.h:
mcp/../manifest/yaml.h:
mcp/../manifest/../util/secrets.h:
mcp/../manifest/../util/util.h:
mcp/../manifest/schema.h:
mcp/../util/cancel.h:
mcp/mcp.h:
mcp/../manifest/manifest.h:
mcp/../sandbox/sandbox.h:
mcp/../sandbox/../manifest/manifest.h:
mcp/../sandbox/../net/egress.h:
mcp/../sandbox/../net/../manifest/manifest.h:
mcp/rpc.h:
mcp/../util/jsonb.h:
mcp/../util/util.h:
mcp/../net/egress.h:
