build-dev/cmd/replay.o: cmd/replay.c cmd/../run/replay.h \
 cmd/../run/../artifacts/diff.h cmd/../run/../artifacts/../util/util.h \
 cmd/../run/../util/util.h cmd/../run/run.h \
 cmd/../run/../manifest/manifest.h cmd/../run/../manifest/../util/util.h \
 cmd/../util/privacy.h cmd/../util/term.h cmd/cmd.h \
 cmd/../manifest/manifest.h cmd/../util/util.h
cmd/../run/replay.h:
cmd/../run/../artifacts/diff.h:
cmd/../run/../artifacts/../util/util.h:
cmd/../run/../util/util.h:
cmd/../run/run.h:
cmd/../run/../manifest/manifest.h:
cmd/../run/../manifest/../util/util.h:
cmd/../util/privacy.h:
cmd/../util/term.h:
cmd/cmd.h:
cmd/../manifest/manifest.h:
cmd/../util/util.h:
