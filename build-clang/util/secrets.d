build-clang/util/secrets.o: util/secrets.c util/secrets.h util/util.h

util/secrets.h:

util/util.h:
