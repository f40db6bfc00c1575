build-dev/snapshot/snaprestore.o: snapshot/snaprestore.c snapshot/bound.h \
 snapshot/../util/util.h snapshot/snapshot.h \
 snapshot/../manifest/manifest.h snapshot/../manifest/../util/util.h \
 snapshot/layername.h snapshot/scan.h snapshot/../util/beneath.h \
 snapshot/watch.h snapshot/../util/zst.h snapshot/../util/util.h
snapshot/bound.h:
snapshot/../util/util.h:
snapshot/snapshot.h:
snapshot/../manifest/manifest.h:
snapshot/../manifest/../util/util.h:
snapshot/layername.h:
snapshot/scan.h:
snapshot/../util/beneath.h:
snapshot/watch.h:
snapshot/../util/zst.h:
snapshot/../util/util.h:
