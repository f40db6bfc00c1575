build-dev/artifacts/verify.o: artifacts/verify.c artifacts/claims.h \
 artifacts/../util/util.h artifacts/events.h artifacts/../util/secrets.h \
 artifacts/../util/util.h artifacts/rundir.h \
 artifacts/../manifest/manifest.h artifacts/../manifest/../util/util.h \
 artifacts/runjson.h artifacts/../snapshot/snapshot.h \
 artifacts/../snapshot/../manifest/manifest.h \
 artifacts/../snapshot/layername.h artifacts/verify.h
artifacts/claims.h:
artifacts/../util/util.h:
artifacts/events.h:
artifacts/../util/secrets.h:
artifacts/../util/util.h:
artifacts/rundir.h:
artifacts/../manifest/manifest.h:
artifacts/../manifest/../util/util.h:
artifacts/runjson.h:
artifacts/../snapshot/snapshot.h:
artifacts/../snapshot/../manifest/manifest.h:
artifacts/../snapshot/layername.h:
artifacts/verify.h:
