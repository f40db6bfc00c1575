build-dev/artifacts/events.o: artifacts/events.c artifacts/events.h \
 artifacts/../util/util.h artifacts/../util/secrets.h \
 artifacts/../util/util.h artifacts/../util/zst.h
artifacts/events.h:
artifacts/../util/util.h:
artifacts/../util/secrets.h:
artifacts/../util/util.h:
artifacts/../util/zst.h:
