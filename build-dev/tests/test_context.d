build-dev/tests/test_context: tests/unit/test_context.c \
 tests/unit/../../run/context.h tests/unit/t.h
tests/unit/../../run/context.h:
tests/unit/t.h:
