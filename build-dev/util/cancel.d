build-dev/util/cancel.o: util/cancel.c util/cancel.h
util/cancel.h:
