build-dev/tests/test_upstream: tests/unit/test_upstream.c \
 tests/unit/../../artifacts/events.h \
 tests/unit/../../artifacts/../util/util.h \
 tests/unit/../../artifacts/../util/secrets.h \
 tests/unit/../../artifacts/../util/util.h \
 tests/unit/../../artifacts/rundir.h \
 tests/unit/../../artifacts/../manifest/manifest.h \
 tests/unit/../../artifacts/../manifest/../util/util.h \
 tests/unit/../../artifacts/runjson.h tests/unit/../../run/upstream.h \
 tests/unit/../../run/../manifest/manifest.h tests/unit/../../run/agent.h \
 tests/unit/../../run/../artifacts/events.h \
 tests/unit/../../run/../artifacts/rundir.h \
 tests/unit/../../run/../snapshot/snapshot.h \
 tests/unit/../../run/../snapshot/../manifest/manifest.h \
 tests/unit/../../run/../snapshot/layername.h \
 tests/unit/../../run/../util/secrets.h tests/unit/../../run/budget.h \
 tests/unit/../../run/../llm/llm.h \
 tests/unit/../../run/../llm/../manifest/manifest.h \
 tests/unit/../../run/../llm/../util/secrets.h \
 tests/unit/../../run/../llm/gate.h tests/unit/t.h
tests/unit/../../artifacts/events.h:
tests/unit/../../artifacts/../util/util.h:
tests/unit/../../artifacts/../util/secrets.h:
tests/unit/../../artifacts/../util/util.h:
tests/unit/../../artifacts/rundir.h:
tests/unit/../../artifacts/../manifest/manifest.h:
tests/unit/../../artifacts/../manifest/../util/util.h:
tests/unit/../../artifacts/runjson.h:
tests/unit/../../run/upstream.h:
tests/unit/../../run/../manifest/manifest.h:
tests/unit/../../run/agent.h:
tests/unit/../../run/../artifacts/events.h:
tests/unit/../../run/../artifacts/rundir.h:
tests/unit/../../run/../snapshot/snapshot.h:
tests/unit/../../run/../snapshot/../manifest/manifest.h:
tests/unit/../../run/../snapshot/layername.h:
tests/unit/../../run/../util/secrets.h:
tests/unit/../../run/budget.h:
tests/unit/../../run/../llm/llm.h:
tests/unit/../../run/../llm/../manifest/manifest.h:
tests/unit/../../run/../llm/../util/secrets.h:
tests/unit/../../run/../llm/gate.h:
tests/unit/t.h:
