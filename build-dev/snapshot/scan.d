build-dev/snapshot/scan.o: snapshot/scan.c snapshot/scan.h \
 snapshot/../util/util.h snapshot/../util/beneath.h snapshot/watch.h \
 snapshot/../util/gitignore.h snapshot/../util/glob.h \
 snapshot/../util/util.h
snapshot/scan.h:
snapshot/../util/util.h:
snapshot/../util/beneath.h:
snapshot/watch.h:
snapshot/../util/gitignore.h:
snapshot/../util/glob.h:
snapshot/../util/util.h:
