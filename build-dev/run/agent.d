build-dev/run/agent.o: run/agent.c run/../artifacts/events.h \
 run/../artifacts/../util/util.h run/../artifacts/../util/secrets.h \
 run/../artifacts/../util/util.h run/../artifacts/runjson.h \
 run/../manifest/schema.h run/../manifest/../util/util.h run/agent.h \
 run/../artifacts/rundir.h run/../artifacts/../manifest/manifest.h \
 run/../artifacts/../manifest/../util/util.h run/../snapshot/snapshot.h \
 run/../snapshot/../manifest/manifest.h run/../snapshot/layername.h \
 run/../manifest/manifest.h run/../util/secrets.h run/budget.h \
 run/../llm/llm.h run/../llm/../manifest/manifest.h \
 run/../llm/../util/secrets.h run/../llm/gate.h run/../policy/decide.h \
 run/../policy/policy.h run/../policy/../manifest/manifest.h \
 run/../policy/../util/path.h run/../policy/protect.h \
 run/../policy/gitmeta.h run/../policy/../util/util.h run/progress.h \
 run/../util/cancel.h run/mcpjob.h run/../sandbox/sandbox.h \
 run/../sandbox/../manifest/manifest.h run/../sandbox/../net/egress.h \
 run/../sandbox/../net/../manifest/manifest.h run/tools.h \
 run/../util/utf8.h run/../manifest/skills.h run/../manifest/manifest.h \
 run/../manifest/yaml.h run/../policy/policy.h run/context.h \
 run/../llm/catalog.h
run/../artifacts/events.h:
run/../artifacts/../util/util.h:
run/../artifacts/../util/secrets.h:
run/../artifacts/../util/util.h:
run/../artifacts/runjson.h:
run/../manifest/schema.h:
run/../manifest/../util/util.h:
run/agent.h:
run/../artifacts/rundir.h:
run/../artifacts/../manifest/manifest.h:
run/../artifacts/../manifest/../util/util.h:
run/../snapshot/snapshot.h:
run/../snapshot/../manifest/manifest.h:
run/../snapshot/layername.h:
run/../manifest/manifest.h:
run/../util/secrets.h:
run/budget.h:
run/../llm/llm.h:
run/../llm/../manifest/manifest.h:
run/../llm/../util/secrets.h:
run/../llm/gate.h:
run/../policy/decide.h:
run/../policy/policy.h:
run/../policy/../manifest/manifest.h:
run/../policy/../util/path.h:
run/../policy/protect.h:
run/../policy/gitmeta.h:
run/../policy/../util/util.h:
run/progress.h:
run/../util/cancel.h:
run/mcpjob.h:
run/../sandbox/sandbox.h:
run/../sandbox/../manifest/manifest.h:
run/../sandbox/../net/egress.h:
run/../sandbox/../net/../manifest/manifest.h:
run/tools.h:
run/../util/utf8.h:
run/../manifest/skills.h:
run/../manifest/manifest.h:
run/../manifest/yaml.h:
run/../policy/policy.h:
run/context.h:
run/../llm/catalog.h:
