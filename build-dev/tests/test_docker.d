build-dev/tests/test_docker: tests/unit/test_docker.c tests/unit/t.h \
 tests/unit/../../sandbox/dockerapi.h \
 tests/unit/../../sandbox/../util/util.h \
 tests/unit/../../sandbox/dockerhost.h tests/unit/../../sandbox/sandbox.h \
 tests/unit/../../sandbox/../manifest/manifest.h \
 tests/unit/../../sandbox/../manifest/../util/util.h \
 tests/unit/../../sandbox/../net/egress.h \
 tests/unit/../../sandbox/../net/../manifest/manifest.h
tests/unit/t.h:
tests/unit/../../sandbox/dockerapi.h:
tests/unit/../../sandbox/../util/util.h:
tests/unit/../../sandbox/dockerhost.h:
tests/unit/../../sandbox/sandbox.h:
tests/unit/../../sandbox/../manifest/manifest.h:
tests/unit/../../sandbox/../manifest/../util/util.h:
tests/unit/../../sandbox/../net/egress.h:
tests/unit/../../sandbox/../net/../manifest/manifest.h:
