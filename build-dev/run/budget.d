build-dev/run/budget.o: run/budget.c run/budget.h \
 run/../manifest/manifest.h run/../manifest/../util/util.h \
 run/../llm/llm.h run/../llm/../manifest/manifest.h \
 run/../llm/../util/secrets.h run/../llm/../util/util.h
run/budget.h:
run/../manifest/manifest.h:
run/../manifest/../util/util.h:
run/../llm/llm.h:
run/../llm/../manifest/manifest.h:
run/../llm/../util/secrets.h:
run/../llm/../util/util.h:
