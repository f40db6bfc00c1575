build-dev/tests/test_egress: tests/unit/test_egress.c tests/unit/t.h \
 tests/unit/../../manifest/netrule.h tests/unit/../../manifest/manifest.h \
 tests/unit/../../manifest/../util/util.h tests/unit/../../net/egress.h \
 tests/unit/../../net/../manifest/manifest.h
tests/unit/t.h:
tests/unit/../../manifest/netrule.h:
tests/unit/../../manifest/manifest.h:
tests/unit/../../manifest/../util/util.h:
tests/unit/../../net/egress.h:
tests/unit/../../net/../manifest/manifest.h:
