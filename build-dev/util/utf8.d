build-dev/util/utf8.o: util/utf8.c util/utf8.h util/util.h
util/utf8.h:
util/util.h:
