build-clang/cmd/main.o: cmd/main.c cmd/cmd.h cmd/../manifest/manifest.h \
  cmd/../manifest/../util/util.h cmd/../util/term.h cmd/../util/util.h

cmd/cmd.h:

cmd/../manifest/manifest.h:

cmd/../manifest/../util/util.h:

cmd/../util/term.h:

cmd/../util/util.h:
