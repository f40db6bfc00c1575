build-dev/tests/test_sandbox: tests/unit/test_sandbox.c tests/unit/t.h \
 tests/unit/../../sandbox/sandbox.h \
 tests/unit/../../sandbox/../manifest/manifest.h \
 tests/unit/../../sandbox/../manifest/../util/util.h \
 tests/unit/../../sandbox/../net/egress.h \
 tests/unit/../../sandbox/../net/../manifest/manifest.h
tests/unit/t.h:
tests/unit/../../sandbox/sandbox.h:
tests/unit/../../sandbox/../manifest/manifest.h:
tests/unit/../../sandbox/../manifest/../util/util.h:
tests/unit/../../sandbox/../net/egress.h:
tests/unit/../../sandbox/../net/../manifest/manifest.h:
