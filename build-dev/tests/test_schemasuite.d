build-dev/tests/test_schemasuite: tests/unit/test_schemasuite.c \
 tests/unit/../../manifest/schema.h \
 tests/unit/../../manifest/../util/util.h tests/unit/t.h
tests/unit/../../manifest/schema.h:
tests/unit/../../manifest/../util/util.h:
tests/unit/t.h:
