build-dev/manifest/agentfile.o: manifest/agentfile.c manifest/agentfile.h \
 manifest/manifest.h manifest/../util/util.h manifest/yaml.h
manifest/agentfile.h:
manifest/manifest.h:
manifest/../util/util.h:
manifest/yaml.h:
