build-clang/run/run.o: run/run.c run/../artifacts/carry.h \
  run/../artifacts/../util/util.h run/../artifacts/rundir.h \
  run/../artifacts/../manifest/manifest.h \
  run/../artifacts/../manifest/../util/util.h run/preflight.h \
  run/../manifest/manifest.h run/../artifacts/runjson.h \
  run/../artifacts/../util/secrets.h run/../artifacts/sign.h \
  run/../snapshot/snapshot.h run/../snapshot/../manifest/manifest.h \
  run/../manifest/expr.h run/../manifest/mcpconf.h \
  run/../artifacts/../manifest/yaml.h \
  run/../artifacts/../manifest/../util/secrets.h run/agent.h \
  run/../util/secrets.h run/budget.h run/../llm/llm.h \
  run/../llm/../manifest/manifest.h run/../llm/../util/secrets.h \
  run/../llm/gate.h run/progress.h run/shard.h run/resume.h \
  run/upstream.h run/wspace.h run/../util/cancel.h run/run.h

run/../artifacts/carry.h:

run/../artifacts/../util/util.h:

run/../artifacts/rundir.h:

run/../artifacts/../manifest/manifest.h:

run/../artifacts/../manifest/../util/util.h:

run/preflight.h:

run/../manifest/manifest.h:

run/../artifacts/runjson.h:

run/../artifacts/../util/secrets.h:

run/../artifacts/sign.h:

run/../snapshot/snapshot.h:

run/../snapshot/../manifest/manifest.h:

run/../manifest/expr.h:

run/../manifest/mcpconf.h:

run/../artifacts/../manifest/yaml.h:

run/../artifacts/../manifest/../util/secrets.h:

run/agent.h:

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

run/run.h:
