build-dev/run/doctor.o: run/doctor.c run/doctor.h \
 run/../manifest/manifest.h run/../manifest/../util/util.h \
 run/../sandbox/sandbox.h run/../sandbox/../manifest/manifest.h \
 run/../sandbox/../net/egress.h \
 run/../sandbox/../net/../manifest/manifest.h
run/doctor.h:
run/../manifest/manifest.h:
run/../manifest/../util/util.h:
run/../sandbox/sandbox.h:
run/../sandbox/../manifest/manifest.h:
run/../sandbox/../net/egress.h:
run/../sandbox/../net/../manifest/manifest.h:
