build-dev/artifacts/report.o: artifacts/report.c artifacts/changes.h \
 artifacts/../util/util.h artifacts/events.h artifacts/../util/secrets.h \
 artifacts/../util/util.h artifacts/modeltext.h artifacts/report.h \
 artifacts/runjson.h artifacts/verify.h artifacts/../util/linediff.h \
 artifacts/../util/utf8.h
artifacts/changes.h:
artifacts/../util/util.h:
artifacts/events.h:
artifacts/../util/secrets.h:
artifacts/../util/util.h:
artifacts/modeltext.h:
artifacts/report.h:
artifacts/runjson.h:
artifacts/verify.h:
artifacts/../util/linediff.h:
artifacts/../util/utf8.h:
