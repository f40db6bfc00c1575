build-clang/cmd/diff.o: cmd/diff.c cmd/cmd.h cmd/../manifest/manifest.h \
  cmd/../manifest/../util/util.h cmd/../util/term.h cmd/../util/util.h \
  cmd/../artifacts/calls.h cmd/../artifacts/../util/util.h \
  cmd/../artifacts/changes.h cmd/../util/linediff.h

cmd/cmd.h:

cmd/../manifest/manifest.h:

cmd/../manifest/../util/util.h:

cmd/../util/term.h:

cmd/../util/util.h:

cmd/../artifacts/calls.h:

cmd/../artifacts/../util/util.h:

cmd/../artifacts/changes.h:

cmd/../util/linediff.h:
