build-dev/tests/test_llm: tests/unit/test_llm.c \
 tests/unit/../../llm/http.h tests/unit/../../llm/../util/jsonb.h \
 tests/unit/../../llm/../util/util.h tests/unit/../../llm/catalog.h \
 tests/unit/../../llm/../manifest/manifest.h \
 tests/unit/../../llm/../manifest/../util/util.h \
 tests/unit/../../llm/llm.h tests/unit/../../llm/../util/secrets.h \
 tests/unit/../../llm/modelspec.h tests/unit/t.h
tests/unit/../../llm/http.h:
tests/unit/../../llm/../util/jsonb.h:
tests/unit/../../llm/../util/util.h:
tests/unit/../../llm/catalog.h:
tests/unit/../../llm/../manifest/manifest.h:
tests/unit/../../llm/../manifest/../util/util.h:
tests/unit/../../llm/llm.h:
tests/unit/../../llm/../util/secrets.h:
tests/unit/../../llm/modelspec.h:
tests/unit/t.h:
