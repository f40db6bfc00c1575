build-dev/artifacts/modeltext.o: artifacts/modeltext.c \
 artifacts/modeltext.h artifacts/../util/util.h
artifacts/modeltext.h:
artifacts/../util/util.h:
