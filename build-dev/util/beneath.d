build-dev/util/beneath.o: util/beneath.c util/beneath.h util/util.h
util/beneath.h:
util/util.h:
