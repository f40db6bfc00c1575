build-dev/run/tools.o: run/tools.c run/../artifacts/events.h \
 run/../artifacts/../util/util.h run/../artifacts/../util/secrets.h \
 run/../artifacts/../util/util.h run/tools.h run/../manifest/manifest.h \
 run/../manifest/../util/util.h run/../sandbox/sandbox.h \
 run/../sandbox/../manifest/manifest.h run/../sandbox/../net/egress.h \
 run/../sandbox/../net/../manifest/manifest.h run/../util/secrets.h \
 run/../util/utf8.h run/../manifest/schema.h run/../util/privacy.h \
 run/../util/beneath.h
run/../artifacts/events.h:
run/../artifacts/../util/util.h:
run/../artifacts/../util/secrets.h:
run/../artifacts/../util/util.h:
run/tools.h:
run/../manifest/manifest.h:
run/../manifest/../util/util.h:
run/../sandbox/sandbox.h:
run/../sandbox/../manifest/manifest.h:
run/../sandbox/../net/egress.h:
run/../sandbox/../net/../manifest/manifest.h:
run/../util/secrets.h:
run/../util/utf8.h:
run/../manifest/schema.h:
run/../util/privacy.h:
run/../util/beneath.h:
