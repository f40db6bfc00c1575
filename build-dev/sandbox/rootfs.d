build-dev/sandbox/rootfs.o: sandbox/rootfs.c sandbox/rootfs.h \
 sandbox/sandbox.h sandbox/../manifest/manifest.h \
 sandbox/../manifest/../util/util.h sandbox/../net/egress.h \
 sandbox/../net/../manifest/manifest.h
sandbox/rootfs.h:
sandbox/sandbox.h:
sandbox/../manifest/manifest.h:
sandbox/../manifest/../util/util.h:
sandbox/../net/egress.h:
sandbox/../net/../manifest/manifest.h:
