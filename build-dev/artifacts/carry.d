build-dev/artifacts/carry.o: artifacts/carry.c artifacts/carry.h \
 artifacts/../util/util.h artifacts/../util/copy.h \
 artifacts/../util/util.h artifacts/../snapshot/layername.h
artifacts/carry.h:
artifacts/../util/util.h:
artifacts/../util/copy.h:
artifacts/../util/util.h:
artifacts/../snapshot/layername.h:
