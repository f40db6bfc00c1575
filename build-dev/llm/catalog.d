build-dev/llm/catalog.o: llm/catalog.c llm/catalog.h \
 llm/../manifest/manifest.h llm/../manifest/../util/util.h
llm/catalog.h:
llm/../manifest/manifest.h:
llm/../manifest/../util/util.h:
