build-dev/cmd/prune.o: cmd/prune.c cmd/cmd.h cmd/../manifest/manifest.h \
 cmd/../manifest/../util/util.h cmd/../util/term.h cmd/../util/util.h \
 cmd/../artifacts/prune.h cmd/../artifacts/../util/util.h
cmd/cmd.h:
cmd/../manifest/manifest.h:
cmd/../manifest/../util/util.h:
cmd/../util/term.h:
cmd/../util/util.h:
cmd/../artifacts/prune.h:
cmd/../artifacts/../util/util.h:
