build-dev/llm/gate.o: llm/gate.c llm/../util/util.h llm/gate.h llm/http.h \
 llm/../util/jsonb.h llm/../util/util.h
llm/../util/util.h:
llm/gate.h:
llm/http.h:
llm/../util/jsonb.h:
llm/../util/util.h:
