build-dev/util/util.o: util/util.c util/util.h
util/util.h:
