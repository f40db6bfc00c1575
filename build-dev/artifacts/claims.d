build-dev/artifacts/claims.o: artifacts/claims.c artifacts/claims.h \
 artifacts/../util/util.h artifacts/finalize.h artifacts/rundir.h \
 artifacts/../manifest/manifest.h artifacts/../manifest/../util/util.h \
 artifacts/runjson.h artifacts/../util/secrets.h artifacts/../util/util.h
artifacts/claims.h:
artifacts/../util/util.h:
artifacts/finalize.h:
artifacts/rundir.h:
artifacts/../manifest/manifest.h:
artifacts/../manifest/../util/util.h:
artifacts/runjson.h:
artifacts/../util/secrets.h:
artifacts/../util/util.h:
