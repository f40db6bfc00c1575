build-dev/tests/test_cli: tests/unit/test_cli.c tests/unit/t.h \
 tests/unit/../../cmd/cmd.h tests/unit/../../cmd/../manifest/manifest.h \
 tests/unit/../../cmd/../manifest/../util/util.h \
 tests/unit/../../cmd/../util/term.h tests/unit/../../cmd/../util/util.h \
 tests/unit/../../run/run.h tests/unit/../../run/../manifest/manifest.h
tests/unit/t.h:
tests/unit/../../cmd/cmd.h:
tests/unit/../../cmd/../manifest/manifest.h:
tests/unit/../../cmd/../manifest/../util/util.h:
tests/unit/../../cmd/../util/term.h:
tests/unit/../../cmd/../util/util.h:
tests/unit/../../run/run.h:
tests/unit/../../run/../manifest/manifest.h:
