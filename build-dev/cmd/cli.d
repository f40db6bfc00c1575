build-dev/cmd/cli.o: cmd/cli.c cmd/../artifacts/rundir.h \
 cmd/../artifacts/../manifest/manifest.h \
 cmd/../artifacts/../manifest/../util/util.h cmd/../artifacts/sign.h \
 cmd/../artifacts/../util/secrets.h cmd/../artifacts/../util/util.h \
 cmd/../artifacts/../util/util.h cmd/../snapshot/snapshot.h \
 cmd/../snapshot/../manifest/manifest.h cmd/../snapshot/layername.h \
 cmd/../policy/rulecheck.h cmd/../policy/../manifest/manifest.h \
 cmd/../run/keyreach.h cmd/../run/../manifest/manifest.h cmd/../run/run.h \
 cmd/cmd.h cmd/../manifest/manifest.h cmd/../util/term.h \
 cmd/../util/util.h cmd/gha.h
cmd/../artifacts/rundir.h:
cmd/../artifacts/../manifest/manifest.h:
cmd/../artifacts/../manifest/../util/util.h:
cmd/../artifacts/sign.h:
cmd/../artifacts/../util/secrets.h:
cmd/../artifacts/../util/util.h:
cmd/../artifacts/../util/util.h:
cmd/../snapshot/snapshot.h:
cmd/../snapshot/../manifest/manifest.h:
cmd/../snapshot/layername.h:
cmd/../policy/rulecheck.h:
cmd/../policy/../manifest/manifest.h:
cmd/../run/keyreach.h:
cmd/../run/../manifest/manifest.h:
cmd/../run/run.h:
cmd/cmd.h:
cmd/../manifest/manifest.h:
cmd/../util/term.h:
cmd/../util/util.h:
cmd/gha.h:
