build-dev/run/resume.o: run/resume.c run/../artifacts/calls.h \
 run/../artifacts/../util/util.h run/../artifacts/carry.h \
 run/../artifacts/events.h run/../artifacts/../util/secrets.h \
 run/../artifacts/../util/util.h run/../artifacts/runjson.h \
 run/../manifest/yaml.h run/../manifest/manifest.h \
 run/../manifest/../util/util.h run/../util/copy.h run/../util/util.h \
 run/progress.h run/resume.h run/upstream.h run/../manifest/manifest.h \
 run/agent.h run/../artifacts/rundir.h \
 run/../artifacts/../manifest/manifest.h run/../snapshot/snapshot.h \
 run/../snapshot/../manifest/manifest.h run/../snapshot/layername.h \
 run/../util/secrets.h run/budget.h run/../llm/llm.h \
 run/../llm/../manifest/manifest.h run/../llm/../util/secrets.h \
 run/../llm/gate.h
run/../artifacts/calls.h:
run/../artifacts/../util/util.h:
run/../artifacts/carry.h:
run/../artifacts/events.h:
run/../artifacts/../util/secrets.h:
run/../artifacts/../util/util.h:
run/../artifacts/runjson.h:
run/../manifest/yaml.h:
run/../manifest/manifest.h:
run/../manifest/../util/util.h:
run/../util/copy.h:
run/../util/util.h:
run/progress.h:
run/resume.h:
run/upstream.h:
run/../manifest/manifest.h:
run/agent.h:
run/../artifacts/rundir.h:
run/../artifacts/../manifest/manifest.h:
run/../snapshot/snapshot.h:
run/../snapshot/../manifest/manifest.h:
run/../snapshot/layername.h:
run/../util/secrets.h:
run/budget.h:
run/../llm/llm.h:
run/../llm/../manifest/manifest.h:
run/../llm/../util/secrets.h:
run/../llm/gate.h:
