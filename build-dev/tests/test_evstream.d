build-dev/tests/test_evstream: tests/unit/test_evstream.c tests/unit/t.h \
 tests/unit/../../llm/llm.h tests/unit/../../llm/../manifest/manifest.h \
 tests/unit/../../llm/../manifest/../util/util.h \
 tests/unit/../../llm/../util/secrets.h \
 tests/unit/../../llm/../util/util.h tests/unit/../../llm/evstream.h \
 tests/unit/../../llm/../util/util.h
tests/unit/t.h:
tests/unit/../../llm/llm.h:
tests/unit/../../llm/../manifest/manifest.h:
tests/unit/../../llm/../manifest/../util/util.h:
tests/unit/../../llm/../util/secrets.h:
tests/unit/../../llm/../util/util.h:
tests/unit/../../llm/evstream.h:
tests/unit/../../llm/../util/util.h:
