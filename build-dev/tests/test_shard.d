build-dev/tests/test_shard: tests/unit/test_shard.c \
 tests/unit/../../run/shard.h tests/unit/../../run/../manifest/manifest.h \
 tests/unit/../../run/../manifest/../util/util.h tests/unit/t.h
tests/unit/../../run/shard.h:
tests/unit/../../run/../manifest/manifest.h:
tests/unit/../../run/../manifest/../util/util.h:
tests/unit/t.h:
