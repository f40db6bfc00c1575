build-dev/artifacts/changes.o: artifacts/changes.c \
 artifacts/../snapshot/bound.h artifacts/../snapshot/../util/util.h \
 artifacts/calls.h artifacts/../util/util.h artifacts/changes.h \
 artifacts/events.h artifacts/../util/secrets.h artifacts/../util/util.h \
 artifacts/rundir.h artifacts/../manifest/manifest.h \
 artifacts/../manifest/../util/util.h artifacts/runjson.h \
 artifacts/../snapshot/snapshot.h \
 artifacts/../snapshot/../manifest/manifest.h \
 artifacts/../snapshot/layername.h artifacts/../util/gitindex.h
artifacts/../snapshot/bound.h:
artifacts/../snapshot/../util/util.h:
artifacts/calls.h:
artifacts/../util/util.h:
artifacts/changes.h:
artifacts/events.h:
artifacts/../util/secrets.h:
artifacts/../util/util.h:
artifacts/rundir.h:
artifacts/../manifest/manifest.h:
artifacts/../manifest/../util/util.h:
artifacts/runjson.h:
artifacts/../snapshot/snapshot.h:
artifacts/../snapshot/../manifest/manifest.h:
artifacts/../snapshot/layername.h:
artifacts/../util/gitindex.h:
