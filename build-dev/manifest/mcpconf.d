build-dev/manifest/mcpconf.o: manifest/mcpconf.c manifest/expr.h \
 manifest/../util/util.h manifest/mcpconf.h manifest/manifest.h \
 manifest/yaml.h manifest/../util/secrets.h manifest/../util/util.h
manifest/expr.h:
manifest/../util/util.h:
manifest/mcpconf.h:
manifest/manifest.h:
manifest/yaml.h:
manifest/../util/secrets.h:
manifest/../util/util.h:
