build-dev/util/jsonb.o: util/jsonb.c util/jsonb.h util/util.h
util/jsonb.h:
util/util.h:
