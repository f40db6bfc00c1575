build-dev/tests/test_gha: tests/unit/test_gha.c \
 tests/unit/../../artifacts/events.h \
 tests/unit/../../artifacts/../util/util.h \
 tests/unit/../../artifacts/../util/secrets.h \
 tests/unit/../../artifacts/../util/util.h tests/unit/../../cmd/gha.h \
 tests/unit/../../cmd/../util/util.h tests/unit/t.h
tests/unit/../../artifacts/events.h:
tests/unit/../../artifacts/../util/util.h:
tests/unit/../../artifacts/../util/secrets.h:
tests/unit/../../artifacts/../util/util.h:
tests/unit/../../cmd/gha.h:
tests/unit/../../cmd/../util/util.h:
tests/unit/t.h:
