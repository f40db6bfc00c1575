build-dev/llm/converse.o: llm/converse.c llm/catalog.h \
 llm/../manifest/manifest.h llm/../manifest/../util/util.h llm/evstream.h \
 llm/../util/util.h llm/llm.h llm/../util/secrets.h llm/../util/util.h \
 llm/wire.h
llm/catalog.h:
llm/../manifest/manifest.h:
llm/../manifest/../util/util.h:
llm/evstream.h:
llm/../util/util.h:
llm/llm.h:
llm/../util/secrets.h:
llm/../util/util.h:
llm/wire.h:
