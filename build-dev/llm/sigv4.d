build-dev/llm/sigv4.o: llm/sigv4.c llm/sigv4.h llm/../util/util.h
llm/sigv4.h:
llm/../util/util.h:
