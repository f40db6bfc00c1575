build-dev/snapshot/snapshot.o: snapshot/snapshot.c snapshot/snapshot.h \
 snapshot/../manifest/manifest.h snapshot/../manifest/../util/util.h \
 snapshot/layername.h snapshot/scan.h snapshot/../util/util.h \
 snapshot/../util/beneath.h snapshot/watch.h snapshot/../util/zst.h \
 snapshot/../util/util.h
snapshot/snapshot.h:
snapshot/../manifest/manifest.h:
snapshot/../manifest/../util/util.h:
snapshot/layername.h:
snapshot/scan.h:
snapshot/../util/util.h:
snapshot/../util/beneath.h:
snapshot/watch.h:
snapshot/../util/zst.h:
snapshot/../util/util.h:
