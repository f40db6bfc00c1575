build-dev/artifacts/calls.o: artifacts/calls.c artifacts/calls.h \
 artifacts/../util/util.h artifacts/events.h artifacts/../util/secrets.h \
 artifacts/../util/util.h artifacts/../snapshot/layername.h
artifacts/calls.h:
artifacts/../util/util.h:
artifacts/events.h:
artifacts/../util/secrets.h:
artifacts/../util/util.h:
artifacts/../snapshot/layername.h:
