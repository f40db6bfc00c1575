build-dev/tests/test_gitindex: tests/unit/test_gitindex.c \
 tests/unit/../../util/gitindex.h tests/unit/../../util/util.h \
 tests/unit/t.h
tests/unit/../../util/gitindex.h:
tests/unit/../../util/util.h:
tests/unit/t.h:
