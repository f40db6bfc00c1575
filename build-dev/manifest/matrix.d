build-dev/manifest/matrix.o: manifest/matrix.c manifest/expr.h \
 manifest/../util/util.h manifest/matrix.h manifest/yaml.h \
 manifest/manifest.h
manifest/expr.h:
manifest/../util/util.h:
manifest/matrix.h:
manifest/yaml.h:
manifest/manifest.h:
