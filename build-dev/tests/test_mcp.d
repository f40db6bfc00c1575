build-dev/tests/test_mcp: tests/unit/test_mcp.c \
 tests/unit/../../manifest/manifest.h \
 tests/unit/../../manifest/../util/util.h \
 tests/unit/../../policy/policy.h \
 tests/unit/../../policy/../manifest/manifest.h \
 tests/unit/../../policy/../util/path.h \
 tests/unit/../../policy/rulecheck.h tests/unit/t.h
tests/unit/../../manifest/manifest.h:
tests/unit/../../manifest/../util/util.h:
tests/unit/../../policy/policy.h:
tests/unit/../../policy/../manifest/manifest.h:
tests/unit/../../policy/../util/path.h:
tests/unit/../../policy/rulecheck.h:
tests/unit/t.h:
