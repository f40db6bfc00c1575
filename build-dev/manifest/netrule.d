build-dev/manifest/netrule.o: manifest/netrule.c manifest/netrule.h \
 manifest/manifest.h manifest/../util/util.h
manifest/netrule.h:
manifest/manifest.h:
manifest/../util/util.h:
