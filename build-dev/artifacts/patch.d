build-dev/artifacts/patch.o: artifacts/patch.c artifacts/patch.h \
 artifacts/../util/util.h artifacts/events.h artifacts/../util/secrets.h \
 artifacts/../util/util.h artifacts/runjson.h \
 artifacts/../snapshot/snapshot.h \
 artifacts/../snapshot/../manifest/manifest.h \
 artifacts/../snapshot/../manifest/../util/util.h \
 artifacts/../snapshot/layername.h artifacts/../util/gitpatch.h
artifacts/patch.h:
artifacts/../util/util.h:
artifacts/events.h:
artifacts/../util/secrets.h:
artifacts/../util/util.h:
artifacts/runjson.h:
artifacts/../snapshot/snapshot.h:
artifacts/../snapshot/../manifest/manifest.h:
artifacts/../snapshot/../manifest/../util/util.h:
artifacts/../snapshot/layername.h:
artifacts/../util/gitpatch.h:
