build-dev/artifacts/merge.o: artifacts/merge.c artifacts/merge.h \
 artifacts/../util/util.h artifacts/verify.h artifacts/rundir.h \
 artifacts/../manifest/manifest.h artifacts/../manifest/../util/util.h \
 artifacts/runjson.h artifacts/../util/secrets.h artifacts/../util/util.h \
 artifacts/sign.h artifacts/../util/copy.h
artifacts/merge.h:
artifacts/../util/util.h:
artifacts/verify.h:
artifacts/rundir.h:
artifacts/../manifest/manifest.h:
artifacts/../manifest/../util/util.h:
artifacts/runjson.h:
artifacts/../util/secrets.h:
artifacts/../util/util.h:
artifacts/sign.h:
artifacts/../util/copy.h:
