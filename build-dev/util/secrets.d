build-dev/util/secrets.o: util/secrets.c util/secrets.h util/util.h \
 util/utf8.h
util/secrets.h:
util/util.h:
util/utf8.h:
