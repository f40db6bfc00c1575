build-dev/fuzz/fuzz_schema: tests/fuzz/replay.c tests/fuzz/fuzz.h \
 tests/fuzz/../../util/util.h
tests/fuzz/fuzz.h:
tests/fuzz/../../util/util.h:
