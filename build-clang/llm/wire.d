build-clang/llm/wire.o: llm/wire.c llm/wire.h llm/llm.h \
  llm/../manifest/manifest.h llm/../manifest/../util/util.h \
  llm/../util/secrets.h

llm/wire.h:

llm/llm.h:

llm/../manifest/manifest.h:

llm/../manifest/../util/util.h:

llm/../util/secrets.h:
