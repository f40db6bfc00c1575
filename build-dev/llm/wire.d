build-dev/llm/wire.o: llm/wire.c llm/../util/jsonb.h llm/../util/util.h \
 llm/wire.h llm/llm.h llm/../manifest/manifest.h \
 llm/../manifest/../util/util.h llm/../util/secrets.h
llm/../util/jsonb.h:
llm/../util/util.h:
llm/wire.h:
llm/llm.h:
llm/../manifest/manifest.h:
llm/../manifest/../util/util.h:
llm/../util/secrets.h:
