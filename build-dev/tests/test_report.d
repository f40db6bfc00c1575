build-dev/tests/test_report: tests/unit/test_report.c tests/unit/t.h \
 tests/unit/../../artifacts/modeltext.h \
 tests/unit/../../artifacts/report.h \
 tests/unit/../../artifacts/../util/util.h \
 tests/unit/../../util/linediff.h tests/unit/../../util/util.h
tests/unit/t.h:
tests/unit/../../artifacts/modeltext.h:
tests/unit/../../artifacts/report.h:
tests/unit/../../artifacts/../util/util.h:
tests/unit/../../util/linediff.h:
tests/unit/../../util/util.h:
