build-clang/net/egress.o: net/egress.c net/../manifest/netrule.h \
  net/../manifest/manifest.h net/../manifest/../util/util.h net/egress.h \
  net/pump.h

net/../manifest/netrule.h:

net/../manifest/manifest.h:

net/../manifest/../util/util.h:

net/egress.h:

net/pump.h:
