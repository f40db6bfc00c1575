build-dev/cmd/finalize.o: cmd/finalize.c cmd/../artifacts/finalize.h \
 cmd/../artifacts/../util/util.h cmd/../artifacts/sign.h \
 cmd/../artifacts/../util/secrets.h cmd/../artifacts/../util/util.h \
 cmd/cmd.h cmd/../manifest/manifest.h cmd/../manifest/../util/util.h \
 cmd/../util/term.h cmd/../util/util.h
cmd/../artifacts/finalize.h:
cmd/../artifacts/../util/util.h:
cmd/../artifacts/sign.h:
cmd/../artifacts/../util/secrets.h:
cmd/../artifacts/../util/util.h:
cmd/cmd.h:
cmd/../manifest/manifest.h:
cmd/../manifest/../util/util.h:
cmd/../util/term.h:
cmd/../util/util.h:
