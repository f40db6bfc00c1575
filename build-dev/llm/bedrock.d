build-dev/llm/bedrock.o: llm/bedrock.c llm/cloud.h llm/llm.h \
 llm/../manifest/manifest.h llm/../manifest/../util/util.h \
 llm/../util/secrets.h llm/../util/util.h llm/sigv4.h llm/../util/util.h \
 llm/evstream.h llm/sse.h
llm/cloud.h:
llm/llm.h:
llm/../manifest/manifest.h:
llm/../manifest/../util/util.h:
llm/../util/secrets.h:
llm/../util/util.h:
llm/sigv4.h:
llm/../util/util.h:
llm/evstream.h:
llm/sse.h:
