build-dev/cmd/init.o: cmd/init.c cmd/cmd.h cmd/../manifest/manifest.h \
 cmd/../manifest/../util/util.h cmd/../util/term.h cmd/../util/util.h \
 cmd/recipes.h
cmd/cmd.h:
cmd/../manifest/manifest.h:
cmd/../manifest/../util/util.h:
cmd/../util/term.h:
cmd/../util/util.h:
cmd/recipes.h:
