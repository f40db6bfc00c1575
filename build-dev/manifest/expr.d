build-dev/manifest/expr.o: manifest/expr.c manifest/expr.h \
 manifest/../util/util.h
manifest/expr.h:
manifest/../util/util.h:
