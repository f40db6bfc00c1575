build-dev/llm/sse.o: llm/sse.c llm/sse.h llm/../util/util.h
llm/sse.h:
llm/../util/util.h:
