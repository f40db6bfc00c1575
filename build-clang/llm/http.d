build-clang/llm/http.o: llm/http.c llm/http.h llm/../util/util.h \
  llm/sigv4.h llm/../util/cancel.h

llm/http.h:

llm/../util/util.h:

llm/sigv4.h:

llm/../util/cancel.h:
