build-dev/tests/test_policy: tests/unit/test_policy.c tests/unit/t.h \
 tests/unit/../../util/glob.h tests/unit/../../util/util.h \
 tests/unit/../../policy/policy.h \
 tests/unit/../../policy/../manifest/manifest.h \
 tests/unit/../../policy/../manifest/../util/util.h \
 tests/unit/../../policy/../util/path.h tests/unit/agentlines.h \
 tests/unit/../../manifest/preset.h
tests/unit/t.h:
tests/unit/../../util/glob.h:
tests/unit/../../util/util.h:
tests/unit/../../policy/policy.h:
tests/unit/../../policy/../manifest/manifest.h:
tests/unit/../../policy/../manifest/../util/util.h:
tests/unit/../../policy/../util/path.h:
tests/unit/agentlines.h:
tests/unit/../../manifest/preset.h:
