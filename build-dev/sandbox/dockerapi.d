build-dev/sandbox/dockerapi.o: sandbox/dockerapi.c sandbox/dockerapi.h \
 sandbox/../util/util.h sandbox/dockerhost.h sandbox/../util/cancel.h
sandbox/dockerapi.h:
sandbox/../util/util.h:
sandbox/dockerhost.h:
sandbox/../util/cancel.h:
