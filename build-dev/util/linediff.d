build-dev/util/linediff.o: util/linediff.c util/linediff.h util/util.h
util/linediff.h:
util/util.h:
