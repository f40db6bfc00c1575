build-dev/snapshot/bound.o: snapshot/bound.c snapshot/bound.h \
 snapshot/../util/util.h
snapshot/bound.h:
snapshot/../util/util.h:
