build-clang/artifacts/changes.o: artifacts/changes.c \
  artifacts/../snapshot/bound.h artifacts/../snapshot/../util/util.h \
  artifacts/calls.h artifacts/../util/util.h artifacts/changes.h \
  artifacts/events.h artifacts/../util/secrets.h artifacts/runjson.h \
  artifacts/../snapshot/snapshot.h \
  artifacts/../snapshot/../manifest/manifest.h \
  artifacts/../snapshot/../manifest/../util/util.h

artifacts/../snapshot/bound.h:

artifacts/../snapshot/../util/util.h:

artifacts/calls.h:

artifacts/../util/util.h:

artifacts/changes.h:

artifacts/events.h:

artifacts/../util/secrets.h:

artifacts/runjson.h:

artifacts/../snapshot/snapshot.h:

artifacts/../snapshot/../manifest/manifest.h:

artifacts/../snapshot/../manifest/../util/util.h:
