build-dev/sandbox/none.o: sandbox/none.c sandbox/capture.h \
 sandbox/../util/util.h sandbox/../util/cancel.h \
 sandbox/../util/privacy.h sandbox/sandbox.h \
 sandbox/../manifest/manifest.h sandbox/../manifest/../util/util.h \
 sandbox/../net/egress.h sandbox/../net/../manifest/manifest.h
sandbox/capture.h:
sandbox/../util/util.h:
sandbox/../util/cancel.h:
sandbox/../util/privacy.h:
sandbox/sandbox.h:
sandbox/../manifest/manifest.h:
sandbox/../manifest/../util/util.h:
sandbox/../net/egress.h:
sandbox/../net/../manifest/manifest.h:
