build-dev/sandbox/dockerhost.o: sandbox/dockerhost.c sandbox/dockerhost.h \
 sandbox/../util/util.h
sandbox/dockerhost.h:
sandbox/../util/util.h:
