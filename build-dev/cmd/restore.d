build-dev/cmd/restore.o: cmd/restore.c cmd/cmd.h \
 cmd/../manifest/manifest.h cmd/../manifest/../util/util.h \
 cmd/../util/term.h cmd/../util/util.h cmd/../artifacts/calls.h \
 cmd/../artifacts/../util/util.h cmd/../snapshot/snapshot.h \
 cmd/../snapshot/../manifest/manifest.h cmd/../snapshot/layername.h
cmd/cmd.h:
cmd/../manifest/manifest.h:
cmd/../manifest/../util/util.h:
cmd/../util/term.h:
cmd/../util/util.h:
cmd/../artifacts/calls.h:
cmd/../artifacts/../util/util.h:
cmd/../snapshot/snapshot.h:
cmd/../snapshot/../manifest/manifest.h:
cmd/../snapshot/layername.h:
