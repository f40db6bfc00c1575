build-dev/sandbox/userns.o: sandbox/userns.c sandbox/userns.h \
 sandbox/../util/util.h
sandbox/userns.h:
sandbox/../util/util.h:
