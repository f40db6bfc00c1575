build-dev/cmd/diff.o: cmd/diff.c cmd/cmd.h cmd/../manifest/manifest.h \
 cmd/../manifest/../util/util.h cmd/../util/term.h cmd/../util/util.h \
 cmd/../snapshot/layername.h cmd/../artifacts/calls.h \
 cmd/../artifacts/../util/util.h cmd/../artifacts/changes.h \
 cmd/../artifacts/rundir.h cmd/../artifacts/../manifest/manifest.h \
 cmd/../artifacts/patch.h cmd/../util/linediff.h cmd/../util/util.h
cmd/cmd.h:
cmd/../manifest/manifest.h:
cmd/../manifest/../util/util.h:
cmd/../util/term.h:
cmd/../util/util.h:
cmd/../snapshot/layername.h:
cmd/../artifacts/calls.h:
cmd/../artifacts/../util/util.h:
cmd/../artifacts/changes.h:
cmd/../artifacts/rundir.h:
cmd/../artifacts/../manifest/manifest.h:
cmd/../artifacts/patch.h:
cmd/../util/linediff.h:
cmd/../util/util.h:
