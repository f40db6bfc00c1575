build-dev/artifacts/finalize.o: artifacts/finalize.c artifacts/events.h \
 artifacts/../util/util.h artifacts/../util/secrets.h \
 artifacts/../util/util.h artifacts/finalize.h artifacts/rundir.h \
 artifacts/../manifest/manifest.h artifacts/../manifest/../util/util.h \
 artifacts/runjson.h artifacts/../util/zst.h
artifacts/events.h:
artifacts/../util/util.h:
artifacts/../util/secrets.h:
artifacts/../util/util.h:
artifacts/finalize.h:
artifacts/rundir.h:
artifacts/../manifest/manifest.h:
artifacts/../manifest/../util/util.h:
artifacts/runjson.h:
artifacts/../util/zst.h:
