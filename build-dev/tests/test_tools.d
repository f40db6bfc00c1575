build-dev/tests/test_tools: tests/unit/test_tools.c \
 tests/unit/../../run/tools.h tests/unit/../../run/../manifest/manifest.h \
 tests/unit/../../run/../manifest/../util/util.h \
 tests/unit/../../run/../sandbox/sandbox.h \
 tests/unit/../../run/../sandbox/../manifest/manifest.h \
 tests/unit/../../run/../sandbox/../net/egress.h \
 tests/unit/../../run/../sandbox/../net/../manifest/manifest.h \
 tests/unit/../../run/../util/secrets.h \
 tests/unit/../../run/../util/util.h tests/unit/../../run/../util/utf8.h \
 tests/unit/../../sandbox/capture.h \
 tests/unit/../../sandbox/../util/util.h tests/unit/t.h
tests/unit/../../run/tools.h:
tests/unit/../../run/../manifest/manifest.h:
tests/unit/../../run/../manifest/../util/util.h:
tests/unit/../../run/../sandbox/sandbox.h:
tests/unit/../../run/../sandbox/../manifest/manifest.h:
tests/unit/../../run/../sandbox/../net/egress.h:
tests/unit/../../run/../sandbox/../net/../manifest/manifest.h:
tests/unit/../../run/../util/secrets.h:
tests/unit/../../run/../util/util.h:
tests/unit/../../run/../util/utf8.h:
tests/unit/../../sandbox/capture.h:
tests/unit/../../sandbox/../util/util.h:
tests/unit/t.h:
