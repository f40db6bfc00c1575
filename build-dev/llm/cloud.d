build-dev/llm/cloud.o: llm/cloud.c llm/cloud.h llm/llm.h \
 llm/../manifest/manifest.h llm/../manifest/../util/util.h \
 llm/../util/secrets.h llm/../util/util.h
llm/cloud.h:
llm/llm.h:
llm/../manifest/manifest.h:
llm/../manifest/../util/util.h:
llm/../util/secrets.h:
llm/../util/util.h:
