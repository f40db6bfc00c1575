build-dev/tests/test_term: tests/unit/test_term.c tests/unit/t.h \
 tests/unit/../../util/secrets.h tests/unit/../../util/util.h \
 tests/unit/../../util/term.h tests/unit/../../util/utf8.h
tests/unit/t.h:
tests/unit/../../util/secrets.h:
tests/unit/../../util/util.h:
tests/unit/../../util/term.h:
tests/unit/../../util/utf8.h:
