build-clang/artifacts/rundir.o: artifacts/rundir.c artifacts/rundir.h \
  artifacts/../manifest/manifest.h artifacts/../manifest/../util/util.h

artifacts/rundir.h:

artifacts/../manifest/manifest.h:

artifacts/../manifest/../util/util.h:
