build-dev/tests/test_userns: tests/unit/test_userns.c \
 tests/unit/../../sandbox/userns.h \
 tests/unit/../../sandbox/../util/util.h tests/unit/t.h
tests/unit/../../sandbox/userns.h:
tests/unit/../../sandbox/../util/util.h:
tests/unit/t.h:
