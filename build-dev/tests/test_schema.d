build-dev/tests/test_schema: tests/unit/test_schema.c \
 tests/unit/../../manifest/schema.h \
 tests/unit/../../manifest/../util/util.h tests/unit/t.h
tests/unit/../../manifest/schema.h:
tests/unit/../../manifest/../util/util.h:
tests/unit/t.h:
