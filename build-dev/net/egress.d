build-dev/net/egress.o: net/egress.c net/../manifest/netrule.h \
 net/../manifest/manifest.h net/../manifest/../util/util.h \
 net/../util/cancel.h net/egress.h net/../manifest/manifest.h \
 net/httphead.h net/pump.h
net/../manifest/netrule.h:
net/../manifest/manifest.h:
net/../manifest/../util/util.h:
net/../util/cancel.h:
net/egress.h:
net/../manifest/manifest.h:
net/httphead.h:
net/pump.h:
