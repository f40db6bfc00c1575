build-dev/util/gitpatch.o: util/gitpatch.c util/gitpatch.h util/util.h \
 util/secrets.h util/linediff.h
util/gitpatch.h:
util/util.h:
util/secrets.h:
util/linediff.h:
