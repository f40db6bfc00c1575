build-dev/tests/test_shellsplit: tests/unit/test_shellsplit.c \
 tests/unit/t.h tests/unit/agentlines.h \
 tests/unit/../../policy/shellsplit.h tests/unit/../../util/util.h
tests/unit/t.h:
tests/unit/agentlines.h:
tests/unit/../../policy/shellsplit.h:
tests/unit/../../util/util.h:
