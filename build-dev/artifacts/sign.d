build-dev/artifacts/sign.o: artifacts/sign.c artifacts/sign.h \
 artifacts/../util/secrets.h artifacts/../util/util.h \
 artifacts/../util/util.h
artifacts/sign.h:
artifacts/../util/secrets.h:
artifacts/../util/util.h:
artifacts/../util/util.h:
