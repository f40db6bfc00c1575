build-dev/cmd/progress.o: cmd/progress.c cmd/gha.h cmd/../util/util.h \
 cmd/../run/progress.h cmd/cmd.h cmd/../manifest/manifest.h \
 cmd/../manifest/../util/util.h cmd/../util/term.h
cmd/gha.h:
cmd/../util/util.h:
cmd/../run/progress.h:
cmd/cmd.h:
cmd/../manifest/manifest.h:
cmd/../manifest/../util/util.h:
cmd/../util/term.h:
