build-dev/cmd/merge.o: cmd/merge.c cmd/../artifacts/merge.h \
 cmd/../artifacts/../util/util.h cmd/../artifacts/verify.h \
 cmd/../artifacts/sign.h cmd/../artifacts/../util/secrets.h \
 cmd/../artifacts/../util/util.h cmd/gha.h cmd/../util/util.h \
 cmd/../util/privacy.h cmd/../util/term.h cmd/cmd.h \
 cmd/../manifest/manifest.h cmd/../manifest/../util/util.h
cmd/../artifacts/merge.h:
cmd/../artifacts/../util/util.h:
cmd/../artifacts/verify.h:
cmd/../artifacts/sign.h:
cmd/../artifacts/../util/secrets.h:
cmd/../artifacts/../util/util.h:
cmd/gha.h:
cmd/../util/util.h:
cmd/../util/privacy.h:
cmd/../util/term.h:
cmd/cmd.h:
cmd/../manifest/manifest.h:
cmd/../manifest/../util/util.h:
