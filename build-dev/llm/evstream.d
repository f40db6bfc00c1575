build-dev/llm/evstream.o: llm/evstream.c llm/evstream.h \
 llm/../util/util.h
llm/evstream.h:
llm/../util/util.h:
