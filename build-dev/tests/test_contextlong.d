build-dev/tests/test_contextlong: tests/unit/test_contextlong.c \
 tests/unit/../../run/context.h tests/unit/t.h
tests/unit/../../run/context.h:
tests/unit/t.h:
