build-clang/snapshot/scan.o: snapshot/scan.c snapshot/scan.h \
  snapshot/../util/util.h snapshot/watch.h snapshot/../util/glob.h

snapshot/scan.h:

snapshot/../util/util.h:

snapshot/watch.h:

snapshot/../util/glob.h:
