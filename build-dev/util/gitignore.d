build-dev/util/gitignore.o: util/gitignore.c util/gitignore.h util/util.h
util/gitignore.h:
util/util.h:
