build-dev/tests/test_exprseal: tests/unit/test_exprseal.c \
 tests/unit/../../manifest/expr.h \
 tests/unit/../../manifest/../util/util.h tests/unit/t.h
tests/unit/../../manifest/expr.h:
tests/unit/../../manifest/../util/util.h:
tests/unit/t.h:
