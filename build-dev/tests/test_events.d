build-dev/tests/test_events: tests/unit/test_events.c \
 tests/unit/../../artifacts/events.h \
 tests/unit/../../artifacts/../util/util.h \
 tests/unit/../../artifacts/../util/secrets.h \
 tests/unit/../../artifacts/../util/util.h tests/unit/../../util/zst.h \
 tests/unit/../../util/util.h tests/unit/t.h
tests/unit/../../artifacts/events.h:
tests/unit/../../artifacts/../util/util.h:
tests/unit/../../artifacts/../util/secrets.h:
tests/unit/../../artifacts/../util/util.h:
tests/unit/../../util/zst.h:
tests/unit/../../util/util.h:
tests/unit/t.h:
