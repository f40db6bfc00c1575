build-dev/cmd/audit.o: cmd/audit.c cmd/../artifacts/runjson.h \
 cmd/../artifacts/../util/util.h cmd/../artifacts/../util/secrets.h \
 cmd/../artifacts/../util/util.h cmd/../artifacts/calls.h \
 cmd/../artifacts/sign.h cmd/../artifacts/verify.h cmd/cmd.h \
 cmd/../manifest/manifest.h cmd/../manifest/../util/util.h \
 cmd/../util/term.h cmd/../util/util.h
cmd/../artifacts/runjson.h:
cmd/../artifacts/../util/util.h:
cmd/../artifacts/../util/secrets.h:
cmd/../artifacts/../util/util.h:
cmd/../artifacts/calls.h:
cmd/../artifacts/sign.h:
cmd/../artifacts/verify.h:
cmd/cmd.h:
cmd/../manifest/manifest.h:
cmd/../manifest/../util/util.h:
cmd/../util/term.h:
cmd/../util/util.h:
