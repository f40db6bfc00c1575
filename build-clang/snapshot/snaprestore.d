build-clang/snapshot/snaprestore.o: snapshot/snaprestore.c \
  snapshot/bound.h snapshot/../util/util.h snapshot/snapshot.h \
  snapshot/../manifest/manifest.h snapshot/../manifest/../util/util.h \
  snapshot/scan.h snapshot/watch.h snapshot/../util/zst.h

snapshot/bound.h:

snapshot/../util/util.h:

snapshot/snapshot.h:

snapshot/../manifest/manifest.h:

snapshot/../manifest/../util/util.h:

snapshot/scan.h:

snapshot/watch.h:

snapshot/../util/zst.h:
