build-clang/sandbox/sandbox.o: sandbox/sandbox.c sandbox/sandbox.h \
  sandbox/../manifest/manifest.h sandbox/../manifest/../util/util.h \
  sandbox/../net/egress.h sandbox/../net/../manifest/manifest.h

sandbox/sandbox.h:

sandbox/../manifest/manifest.h:

sandbox/../manifest/../util/util.h:

sandbox/../net/egress.h:

sandbox/../net/../manifest/manifest.h:
