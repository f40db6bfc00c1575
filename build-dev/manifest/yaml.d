build-dev/manifest/yaml.o: manifest/yaml.c manifest/yaml.h \
 manifest/manifest.h manifest/../util/util.h
manifest/yaml.h:
manifest/manifest.h:
manifest/../util/util.h:
