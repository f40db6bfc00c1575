build-dev/util/glob.o: util/glob.c util/glob.h util/util.h
util/glob.h:
util/util.h:
