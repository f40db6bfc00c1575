build-dev/net/relay.o: net/relay.c net/relay.h net/../util/util.h \
 net/egress.h net/../manifest/manifest.h net/../manifest/../util/util.h
net/relay.h:
net/../util/util.h:
net/egress.h:
net/../manifest/manifest.h:
net/../manifest/../util/util.h:
