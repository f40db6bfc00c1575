build-dev/cmd/validate.o: cmd/validate.c cmd/../manifest/manifest.h \
 cmd/../manifest/../util/util.h cmd/../run/preflight.h \
 cmd/../run/../manifest/manifest.h cmd/../util/term.h cmd/cmd.h \
 cmd/../util/util.h
cmd/../manifest/manifest.h:
cmd/../manifest/../util/util.h:
cmd/../run/preflight.h:
cmd/../run/../manifest/manifest.h:
cmd/../util/term.h:
cmd/cmd.h:
cmd/../util/util.h:
