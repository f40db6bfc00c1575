build-dev/manifest/skills.o: manifest/skills.c manifest/skills.h \
 manifest/manifest.h manifest/../util/util.h manifest/yaml.h
manifest/skills.h:
manifest/manifest.h:
manifest/../util/util.h:
manifest/yaml.h:
