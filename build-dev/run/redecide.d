build-dev/run/redecide.o: run/redecide.c run/../artifacts/calls.h \
 run/../artifacts/../util/util.h run/../artifacts/runjson.h \
 run/../artifacts/../util/secrets.h run/../artifacts/../util/util.h \
 run/../policy/policy.h run/../policy/../manifest/manifest.h \
 run/../policy/../manifest/../util/util.h run/../policy/../util/path.h \
 run/../util/glob.h run/../util/util.h run/redecide.h \
 run/../manifest/manifest.h
run/../artifacts/calls.h:
run/../artifacts/../util/util.h:
run/../artifacts/runjson.h:
run/../artifacts/../util/secrets.h:
run/../artifacts/../util/util.h:
run/../policy/policy.h:
run/../policy/../manifest/manifest.h:
run/../policy/../manifest/../util/util.h:
run/../policy/../util/path.h:
run/../util/glob.h:
run/../util/util.h:
run/redecide.h:
run/../manifest/manifest.h:
