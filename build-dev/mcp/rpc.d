build-dev/mcp/rpc.o: mcp/rpc.c mcp/rpc.h mcp/../util/jsonb.h \
 mcp/../util/util.h
mcp/rpc.h:
mcp/../util/jsonb.h:
mcp/../util/util.h:
