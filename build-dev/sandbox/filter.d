build-dev/sandbox/filter.o: sandbox/filter.c sandbox/filter.h \
 sandbox/../util/util.h
sandbox/filter.h:
sandbox/../util/util.h:
