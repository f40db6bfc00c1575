build-dev/run/wspace.o: run/wspace.c run/../snapshot/snapshot.h \
 run/../snapshot/../manifest/manifest.h \
 run/../snapshot/../manifest/../util/util.h run/../snapshot/layername.h \
 run/../util/term.h run/wspace.h run/agent.h run/../artifacts/events.h \
 run/../artifacts/../util/util.h run/../artifacts/../util/secrets.h \
 run/../artifacts/../util/util.h run/../artifacts/rundir.h \
 run/../artifacts/../manifest/manifest.h run/../manifest/manifest.h \
 run/../util/secrets.h run/budget.h run/../llm/llm.h \
 run/../llm/../manifest/manifest.h run/../llm/../util/secrets.h \
 run/../llm/gate.h
run/../snapshot/snapshot.h:
run/../snapshot/../manifest/manifest.h:
run/../snapshot/../manifest/../util/util.h:
run/../snapshot/layername.h:
run/../util/term.h:
run/wspace.h:
run/agent.h:
run/../artifacts/events.h:
run/../artifacts/../util/util.h:
run/../artifacts/../util/secrets.h:
run/../artifacts/../util/util.h:
run/../artifacts/rundir.h:
run/../artifacts/../manifest/manifest.h:
run/../manifest/manifest.h:
run/../util/secrets.h:
run/budget.h:
run/../llm/llm.h:
run/../llm/../manifest/manifest.h:
run/../llm/../util/secrets.h:
run/../llm/gate.h:
