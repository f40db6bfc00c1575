build-dev/sandbox/docker.o: sandbox/docker.c sandbox/capture.h \
 sandbox/../util/util.h sandbox/dockerapi.h sandbox/dockerhost.h \
 sandbox/../net/egress.h sandbox/../net/../manifest/manifest.h \
 sandbox/../net/../manifest/../util/util.h sandbox/filter.h \
 sandbox/sandbox.h sandbox/../manifest/manifest.h
sandbox/capture.h:
sandbox/../util/util.h:
sandbox/dockerapi.h:
sandbox/dockerhost.h:
sandbox/../net/egress.h:
sandbox/../net/../manifest/manifest.h:
sandbox/../net/../manifest/../util/util.h:
sandbox/filter.h:
sandbox/sandbox.h:
sandbox/../manifest/manifest.h:
