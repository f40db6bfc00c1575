build-dev/util/gitindex.o: util/gitindex.c util/gitindex.h util/util.h
util/gitindex.h:
util/util.h:
