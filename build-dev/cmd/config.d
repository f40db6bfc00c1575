build-dev/cmd/config.o: cmd/config.c cmd/../manifest/layers.h \
 cmd/../manifest/../util/util.h cmd/../manifest/manifest.h \
 cmd/../util/term.h cmd/cmd.h cmd/../util/util.h
cmd/../manifest/layers.h:
cmd/../manifest/../util/util.h:
cmd/../manifest/manifest.h:
cmd/../util/term.h:
cmd/cmd.h:
cmd/../util/util.h:
