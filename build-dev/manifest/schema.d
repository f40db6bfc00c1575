build-dev/manifest/schema.o: manifest/schema.c manifest/schema.h \
 manifest/../util/util.h
manifest/schema.h:
manifest/../util/util.h:
