build-dev/llm/http.o: llm/http.c llm/http.h llm/../util/jsonb.h \
 llm/../util/util.h llm/sigv4.h llm/../util/util.h llm/../util/cancel.h
llm/http.h:
llm/../util/jsonb.h:
llm/../util/util.h:
llm/sigv4.h:
llm/../util/util.h:
llm/../util/cancel.h:
