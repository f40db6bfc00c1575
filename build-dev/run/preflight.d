build-dev/run/preflight.o: run/preflight.c run/preflight.h \
 run/../manifest/manifest.h run/../manifest/../util/util.h \
 run/../llm/llm.h run/../llm/../manifest/manifest.h \
 run/../llm/../util/secrets.h run/../llm/../util/util.h \
 run/../sandbox/sandbox.h run/../sandbox/../manifest/manifest.h \
 run/../sandbox/../net/egress.h \
 run/../sandbox/../net/../manifest/manifest.h
run/preflight.h:
run/../manifest/manifest.h:
run/../manifest/../util/util.h:
run/../llm/llm.h:
run/../llm/../manifest/manifest.h:
run/../llm/../util/secrets.h:
run/../llm/../util/util.h:
run/../sandbox/sandbox.h:
run/../sandbox/../manifest/manifest.h:
run/../sandbox/../net/egress.h:
run/../sandbox/../net/../manifest/manifest.h:
