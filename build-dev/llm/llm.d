build-dev/llm/llm.o: llm/llm.c llm/../util/utf8.h llm/gate.h llm/http.h \
 llm/../util/jsonb.h llm/../util/util.h llm/catalog.h \
 llm/../manifest/manifest.h llm/../manifest/../util/util.h llm/llm.h \
 llm/../util/secrets.h llm/sigv4.h llm/../util/util.h llm/sse.h \
 llm/evstream.h llm/../artifacts/events.h llm/../artifacts/../util/util.h \
 llm/../artifacts/../util/secrets.h
llm/../util/utf8.h:
llm/gate.h:
llm/http.h:
llm/../util/jsonb.h:
llm/../util/util.h:
llm/catalog.h:
llm/../manifest/manifest.h:
llm/../manifest/../util/util.h:
llm/llm.h:
llm/../util/secrets.h:
llm/sigv4.h:
llm/../util/util.h:
llm/sse.h:
llm/evstream.h:
llm/../artifacts/events.h:
llm/../artifacts/../util/util.h:
llm/../artifacts/../util/secrets.h:
