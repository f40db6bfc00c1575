build-clang/cmd/cli.o: cmd/cli.c cmd/../artifacts/rundir.h \
  cmd/../artifacts/../manifest/manifest.h \
  cmd/../artifacts/../manifest/../util/util.h cmd/../artifacts/sign.h \
  cmd/../artifacts/../util/util.h cmd/../snapshot/snapshot.h \
  cmd/../snapshot/../manifest/manifest.h cmd/../policy/rulecheck.h \
  cmd/../policy/../manifest/manifest.h cmd/../run/run.h \
  cmd/../run/../manifest/manifest.h cmd/cmd.h cmd/../manifest/manifest.h \
  cmd/../util/term.h cmd/../util/util.h cmd/gha.h

cmd/../artifacts/rundir.h:

cmd/../artifacts/../manifest/manifest.h:

cmd/../artifacts/../manifest/../util/util.h:

cmd/../artifacts/sign.h:

cmd/../artifacts/../util/util.h:

cmd/../snapshot/snapshot.h:

cmd/../snapshot/../manifest/manifest.h:

cmd/../policy/rulecheck.h:

cmd/../policy/../manifest/manifest.h:

cmd/../run/run.h:

cmd/../run/../manifest/manifest.h:

cmd/cmd.h:

cmd/../manifest/manifest.h:

cmd/../util/term.h:

cmd/../util/util.h:

cmd/gha.h:
