build-clang/llm/scripted.o: llm/scripted.c llm/llm.h \
  llm/../manifest/manifest.h llm/../manifest/../util/util.h \
  llm/../util/secrets.h

llm/llm.h:

llm/../manifest/manifest.h:

llm/../manifest/../util/util.h:

llm/../util/secrets.h:
