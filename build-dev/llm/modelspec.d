build-dev/llm/modelspec.o: llm/modelspec.c llm/modelspec.h \
 llm/../manifest/manifest.h llm/../manifest/../util/util.h
llm/modelspec.h:
llm/../manifest/manifest.h:
llm/../manifest/../util/util.h:
