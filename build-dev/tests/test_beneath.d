build-dev/tests/test_beneath: tests/unit/test_beneath.c tests/unit/t.h \
 tests/unit/../../util/beneath.h tests/unit/../../util/util.h
tests/unit/t.h:
tests/unit/../../util/beneath.h:
tests/unit/../../util/util.h:
