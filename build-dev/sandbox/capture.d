build-dev/sandbox/capture.o: sandbox/capture.c sandbox/capture.h \
 sandbox/../util/util.h sandbox/../util/cancel.h
sandbox/capture.h:
sandbox/../util/util.h:
sandbox/../util/cancel.h:
