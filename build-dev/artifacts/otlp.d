build-dev/artifacts/otlp.o: artifacts/otlp.c artifacts/events.h \
 artifacts/../util/util.h artifacts/../util/secrets.h \
 artifacts/../util/util.h artifacts/otlp.h artifacts/runjson.h
artifacts/events.h:
artifacts/../util/util.h:
artifacts/../util/secrets.h:
artifacts/../util/util.h:
artifacts/otlp.h:
artifacts/runjson.h:
