build-dev/snapshot/watch.o: snapshot/watch.c snapshot/watch.h \
 snapshot/../util/util.h
snapshot/watch.h:
snapshot/../util/util.h:
