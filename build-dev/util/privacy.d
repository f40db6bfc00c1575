build-dev/util/privacy.o: util/privacy.c util/privacy.h
util/privacy.h:
