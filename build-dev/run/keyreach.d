build-dev/run/keyreach.o: run/keyreach.c run/../sandbox/sandbox.h \
 run/../sandbox/../manifest/manifest.h \
 run/../sandbox/../manifest/../util/util.h run/../sandbox/../net/egress.h \
 run/../sandbox/../net/../manifest/manifest.h run/keyreach.h \
 run/../manifest/manifest.h
run/../sandbox/sandbox.h:
run/../sandbox/../manifest/manifest.h:
run/../sandbox/../manifest/../util/util.h:
run/../sandbox/../net/egress.h:
run/../sandbox/../net/../manifest/manifest.h:
run/keyreach.h:
run/../manifest/manifest.h:
