build-dev/tests/test_snapshot: tests/unit/test_snapshot.c tests/unit/t.h \
 tests/unit/../../snapshot/scan.h \
 tests/unit/../../snapshot/../util/util.h \
 tests/unit/../../snapshot/../util/beneath.h \
 tests/unit/../../snapshot/watch.h tests/unit/../../snapshot/snapshot.h \
 tests/unit/../../snapshot/../manifest/manifest.h \
 tests/unit/../../snapshot/../manifest/../util/util.h \
 tests/unit/../../snapshot/layername.h tests/unit/../../util/zst.h \
 tests/unit/../../util/util.h tests/unit/../../util/glob.h
tests/unit/t.h:
tests/unit/../../snapshot/scan.h:
tests/unit/../../snapshot/../util/util.h:
tests/unit/../../snapshot/../util/beneath.h:
tests/unit/../../snapshot/watch.h:
tests/unit/../../snapshot/snapshot.h:
tests/unit/../../snapshot/../manifest/manifest.h:
tests/unit/../../snapshot/../manifest/../util/util.h:
tests/unit/../../snapshot/layername.h:
tests/unit/../../util/zst.h:
tests/unit/../../util/util.h:
tests/unit/../../util/glob.h:
