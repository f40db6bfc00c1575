build-dev/manifest/manifest.o: manifest/manifest.c manifest/manifest.h \
 manifest/../util/util.h manifest/preset.h manifest/expr.h \
 manifest/../util/beneath.h manifest/matrix.h manifest/yaml.h \
 manifest/netrule.h manifest/schema.h manifest/../util/path.h \
 manifest/mcpconf.h manifest/../util/secrets.h manifest/../util/util.h \
 manifest/agentfile.h manifest/skills.h manifest/layers.h
manifest/manifest.h:
manifest/../util/util.h:
manifest/preset.h:
manifest/expr.h:
manifest/../util/beneath.h:
manifest/matrix.h:
manifest/yaml.h:
manifest/netrule.h:
manifest/schema.h:
manifest/../util/path.h:
manifest/mcpconf.h:
manifest/../util/secrets.h:
manifest/../util/util.h:
manifest/agentfile.h:
manifest/skills.h:
manifest/layers.h:
