build-dev/manifest/layers.o: manifest/layers.c manifest/layers.h \
 manifest/../util/util.h
manifest/layers.h:
manifest/../util/util.h:
