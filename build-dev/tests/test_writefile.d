build-dev/tests/test_writefile: tests/unit/test_writefile.c \
 tests/unit/t.h tests/unit/../../util/util.h tests/unit/../../util/zst.h \
 tests/unit/../../util/util.h
tests/unit/t.h:
tests/unit/../../util/util.h:
tests/unit/../../util/zst.h:
tests/unit/../../util/util.h:
