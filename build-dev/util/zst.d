build-dev/util/zst.o: util/zst.c util/zst.h util/util.h
util/zst.h:
util/util.h:
