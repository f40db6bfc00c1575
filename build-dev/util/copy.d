build-dev/util/copy.o: util/copy.c util/copy.h util/util.h
util/copy.h:
util/util.h:
