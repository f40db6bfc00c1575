build-clang/artifacts/carry.o: artifacts/carry.c artifacts/carry.h \
  artifacts/../util/util.h artifacts/../util/copy.h

artifacts/carry.h:

artifacts/../util/util.h:

artifacts/../util/copy.h:
