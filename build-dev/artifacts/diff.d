build-dev/artifacts/diff.o: artifacts/diff.c artifacts/../util/glob.h \
 artifacts/../util/util.h artifacts/../util/linediff.h artifacts/calls.h \
 artifacts/../util/util.h artifacts/changes.h artifacts/diff.h
artifacts/../util/glob.h:
artifacts/../util/util.h:
artifacts/../util/linediff.h:
artifacts/calls.h:
artifacts/../util/util.h:
artifacts/changes.h:
artifacts/diff.h:
