build-dev/tests/test_manifest: tests/unit/test_manifest.c \
 tests/unit/../../manifest/manifest.h \
 tests/unit/../../manifest/../util/util.h tests/unit/t.h
tests/unit/../../manifest/manifest.h:
tests/unit/../../manifest/../util/util.h:
tests/unit/t.h:
