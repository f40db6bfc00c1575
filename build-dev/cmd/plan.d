build-dev/cmd/plan.o: cmd/plan.c cmd/../manifest/manifest.h \
 cmd/../manifest/../util/util.h cmd/../run/shard.h \
 cmd/../run/../manifest/manifest.h cmd/cmd.h cmd/../util/term.h \
 cmd/../util/util.h
cmd/../manifest/manifest.h:
cmd/../manifest/../util/util.h:
cmd/../run/shard.h:
cmd/../run/../manifest/manifest.h:
cmd/cmd.h:
cmd/../util/term.h:
cmd/../util/util.h:
