build-dev/run/replay.o: run/replay.c run/../artifacts/runjson.h \
 run/../artifacts/../util/util.h run/../artifacts/../util/secrets.h \
 run/../artifacts/../util/util.h run/../llm/modelspec.h \
 run/../llm/../manifest/manifest.h run/../llm/../manifest/../util/util.h \
 run/../manifest/expr.h run/../manifest/../util/util.h \
 run/../manifest/manifest.h run/../manifest/netrule.h \
 run/../manifest/manifest.h run/../policy/rulecheck.h \
 run/../policy/../manifest/manifest.h run/../snapshot/snapshot.h \
 run/../snapshot/../manifest/manifest.h run/../snapshot/layername.h \
 run/../snapshot/layername.h run/ignored.h run/../util/util.h \
 run/progress.h run/replay.h run/../artifacts/diff.h run/run.h
run/../artifacts/runjson.h:
run/../artifacts/../util/util.h:
run/../artifacts/../util/secrets.h:
run/../artifacts/../util/util.h:
run/../llm/modelspec.h:
run/../llm/../manifest/manifest.h:
run/../llm/../manifest/../util/util.h:
run/../manifest/expr.h:
run/../manifest/../util/util.h:
run/../manifest/manifest.h:
run/../manifest/netrule.h:
run/../manifest/manifest.h:
run/../policy/rulecheck.h:
run/../policy/../manifest/manifest.h:
run/../snapshot/snapshot.h:
run/../snapshot/../manifest/manifest.h:
run/../snapshot/layername.h:
run/../snapshot/layername.h:
run/ignored.h:
run/../util/util.h:
run/progress.h:
run/replay.h:
run/../artifacts/diff.h:
run/run.h:
