build-clang/artifacts/sign.o: artifacts/sign.c artifacts/sign.h \
  artifacts/../util/util.h

artifacts/sign.h:

artifacts/../util/util.h:
