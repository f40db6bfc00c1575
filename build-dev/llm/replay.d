build-dev/llm/replay.o: llm/replay.c llm/../artifacts/events.h \
 llm/../artifacts/../util/util.h llm/../artifacts/../util/secrets.h \
 llm/../artifacts/../util/util.h llm/llm.h llm/../manifest/manifest.h \
 llm/../manifest/../util/util.h llm/../util/secrets.h
llm/../artifacts/events.h:
llm/../artifacts/../util/util.h:
llm/../artifacts/../util/secrets.h:
llm/../artifacts/../util/util.h:
llm/llm.h:
llm/../manifest/manifest.h:
llm/../manifest/../util/util.h:
llm/../util/secrets.h:
