build-dev/artifacts/rundir.o: artifacts/rundir.c artifacts/rundir.h \
 artifacts/../manifest/manifest.h artifacts/../manifest/../util/util.h \
 artifacts/../snapshot/scan.h artifacts/../snapshot/../util/util.h \
 artifacts/../snapshot/../util/beneath.h artifacts/../snapshot/watch.h
artifacts/rundir.h:
artifacts/../manifest/manifest.h:
artifacts/../manifest/../util/util.h:
artifacts/../snapshot/scan.h:
artifacts/../snapshot/../util/util.h:
artifacts/../snapshot/../util/beneath.h:
artifacts/../snapshot/watch.h:
