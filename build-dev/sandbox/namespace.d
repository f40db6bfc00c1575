build-dev/sandbox/namespace.o: sandbox/namespace.c sandbox/capture.h \
 sandbox/../util/util.h sandbox/../util/cancel.h \
 sandbox/../util/privacy.h sandbox/cgroup.h sandbox/../net/egress.h \
 sandbox/../net/../manifest/manifest.h \
 sandbox/../net/../manifest/../util/util.h sandbox/filter.h \
 sandbox/../net/relay.h sandbox/../net/../util/util.h \
 sandbox/../net/egress.h sandbox/rootfs.h sandbox/sandbox.h \
 sandbox/../manifest/manifest.h sandbox/userns.h
sandbox/capture.h:
sandbox/../util/util.h:
sandbox/../util/cancel.h:
sandbox/../util/privacy.h:
sandbox/cgroup.h:
sandbox/../net/egress.h:
sandbox/../net/../manifest/manifest.h:
sandbox/../net/../manifest/../util/util.h:
sandbox/filter.h:
sandbox/../net/relay.h:
sandbox/../net/../util/util.h:
sandbox/../net/egress.h:
sandbox/rootfs.h:
sandbox/sandbox.h:
sandbox/../manifest/manifest.h:
sandbox/userns.h:
