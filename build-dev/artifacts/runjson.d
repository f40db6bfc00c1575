build-dev/artifacts/runjson.o: artifacts/runjson.c artifacts/events.h \
 artifacts/../util/util.h artifacts/../util/secrets.h \
 artifacts/../util/util.h artifacts/runjson.h \
 artifacts/../manifest/yaml.h artifacts/../manifest/manifest.h \
 artifacts/../manifest/../util/util.h
artifacts/events.h:
artifacts/../util/util.h:
artifacts/../util/secrets.h:
artifacts/../util/util.h:
artifacts/runjson.h:
artifacts/../manifest/yaml.h:
artifacts/../manifest/manifest.h:
artifacts/../manifest/../util/util.h:
