build-dev/tests/test_dockerhost: tests/unit/test_dockerhost.c \
 tests/unit/t.h tests/unit/../../sandbox/dockerapi.h \
 tests/unit/../../sandbox/../util/util.h \
 tests/unit/../../sandbox/dockerhost.h \
 tests/unit/../../sandbox/dockerhost.h
tests/unit/t.h:
tests/unit/../../sandbox/dockerapi.h:
tests/unit/../../sandbox/../util/util.h:
tests/unit/../../sandbox/dockerhost.h:
tests/unit/../../sandbox/dockerhost.h:
