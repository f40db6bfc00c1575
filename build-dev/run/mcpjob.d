build-dev/run/mcpjob.o: run/mcpjob.c run/../manifest/mcpconf.h \
 run/../manifest/manifest.h run/../manifest/../util/util.h \
 run/../manifest/yaml.h run/../manifest/../util/secrets.h \
 run/../manifest/../util/util.h run/../util/glob.h run/../util/util.h \
 run/../mcp/mcp.h run/../mcp/../manifest/manifest.h \
 run/../mcp/../sandbox/sandbox.h \
 run/../mcp/../sandbox/../manifest/manifest.h \
 run/../mcp/../sandbox/../net/egress.h \
 run/../mcp/../sandbox/../net/../manifest/manifest.h run/../mcp/rpc.h \
 run/../mcp/../util/jsonb.h run/../mcp/../util/util.h run/mcpjob.h \
 run/../artifacts/events.h run/../artifacts/../util/util.h \
 run/../artifacts/../util/secrets.h run/../manifest/manifest.h \
 run/../sandbox/sandbox.h run/tools.h run/../util/secrets.h \
 run/../util/utf8.h
run/../manifest/mcpconf.h:
run/../manifest/manifest.h:
run/../manifest/../util/util.h:
run/../manifest/yaml.h:
run/../manifest/../util/secrets.h:
run/../manifest/../util/util.h:
run/../util/glob.h:
run/../util/util.h:
run/../mcp/mcp.h:
run/../mcp/../manifest/manifest.h:
run/../mcp/../sandbox/sandbox.h:
run/../mcp/../sandbox/../manifest/manifest.h:
run/../mcp/../sandbox/../net/egress.h:
run/../mcp/../sandbox/../net/../manifest/manifest.h:
run/../mcp/rpc.h:
run/../mcp/../util/jsonb.h:
run/../mcp/../util/util.h:
run/mcpjob.h:
run/../artifacts/events.h:
run/../artifacts/../util/util.h:
run/../artifacts/../util/secrets.h:
run/../manifest/manifest.h:
run/../sandbox/sandbox.h:
run/tools.h:
run/../util/secrets.h:
run/../util/utf8.h:
