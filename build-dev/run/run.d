build-dev/run/run.o: run/run.c run/../artifacts/carry.h \
 run/../artifacts/../util/util.h run/../artifacts/patch.h \
 run/../artifacts/rundir.h run/../artifacts/../manifest/manifest.h \
 run/../artifacts/../manifest/../util/util.h run/preflight.h \
 run/../manifest/manifest.h run/../artifacts/runjson.h \
 run/../artifacts/../util/secrets.h run/../artifacts/../util/util.h \
 run/../artifacts/sign.h run/../snapshot/snapshot.h \
 run/../snapshot/../manifest/manifest.h run/../snapshot/layername.h \
 run/../manifest/expr.h run/../manifest/../util/util.h \
 run/../manifest/mcpconf.h run/../manifest/manifest.h \
 run/../manifest/yaml.h run/../manifest/../util/secrets.h run/agent.h \
 run/../artifacts/events.h run/../util/secrets.h run/budget.h \
 run/../llm/llm.h run/../llm/../manifest/manifest.h \
 run/../llm/../util/secrets.h run/../llm/gate.h run/progress.h \
 run/shard.h run/resume.h run/upstream.h run/wspace.h \
 run/../util/cancel.h run/../util/gitpatch.h run/../util/util.h run/run.h
run/../artifacts/carry.h:
run/../artifacts/../util/util.h:
run/../artifacts/patch.h:
run/../artifacts/rundir.h:
run/../artifacts/../manifest/manifest.h:
run/../artifacts/../manifest/../util/util.h:
run/preflight.h:
run/../manifest/manifest.h:
run/../artifacts/runjson.h:
run/../artifacts/../util/secrets.h:
run/../artifacts/../util/util.h:
run/../artifacts/sign.h:
run/../snapshot/snapshot.h:
run/../snapshot/../manifest/manifest.h:
run/../snapshot/layername.h:
run/../manifest/expr.h:
run/../manifest/../util/util.h:
run/../manifest/mcpconf.h:
run/../manifest/manifest.h:
run/../manifest/yaml.h:
run/../manifest/../util/secrets.h:
run/agent.h:
run/../artifacts/events.h:
run/../util/secrets.h:
run/budget.h:
run/../llm/llm.h:
run/../llm/../manifest/manifest.h:
run/../llm/../util/secrets.h:
run/../llm/gate.h:
run/progress.h:
run/shard.h:
run/resume.h:
run/upstream.h:
run/wspace.h:
run/../util/cancel.h:
run/../util/gitpatch.h:
run/../util/util.h:
run/run.h:
