build-dev/llm/responses.o: llm/responses.c llm/catalog.h \
 llm/../manifest/manifest.h llm/../manifest/../util/util.h llm/llm.h \
 llm/../util/secrets.h llm/../util/util.h llm/sse.h llm/wire.h
llm/catalog.h:
llm/../manifest/manifest.h:
llm/../manifest/../util/util.h:
llm/llm.h:
llm/../util/secrets.h:
llm/../util/util.h:
llm/sse.h:
llm/wire.h:
