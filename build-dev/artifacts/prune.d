build-dev/artifacts/prune.o: artifacts/prune.c artifacts/prune.h \
 artifacts/../util/util.h artifacts/rundir.h \
 artifacts/../manifest/manifest.h artifacts/../manifest/../util/util.h \
 artifacts/runjson.h artifacts/../util/secrets.h artifacts/../util/util.h \
 artifacts/../snapshot/snapshot.h \
 artifacts/../snapshot/../manifest/manifest.h \
 artifacts/../snapshot/layername.h
artifacts/prune.h:
artifacts/../util/util.h:
artifacts/rundir.h:
artifacts/../manifest/manifest.h:
artifacts/../manifest/../util/util.h:
artifacts/runjson.h:
artifacts/../util/secrets.h:
artifacts/../util/util.h:
artifacts/../snapshot/snapshot.h:
artifacts/../snapshot/../manifest/manifest.h:
artifacts/../snapshot/layername.h:
