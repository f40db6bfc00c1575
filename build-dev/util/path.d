build-dev/util/path.o: util/path.c util/path.h util/glob.h util/util.h
util/path.h:
util/glob.h:
util/util.h:
