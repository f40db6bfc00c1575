build-dev/tests/test_glob: tests/unit/test_glob.c tests/unit/t.h \
 tests/unit/../../util/glob.h tests/unit/../../util/util.h
tests/unit/t.h:
tests/unit/../../util/glob.h:
tests/unit/../../util/util.h:
