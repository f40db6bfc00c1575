build-clang/cmd/replay.o: cmd/replay.c cmd/../artifacts/diff.h \
  cmd/../artifacts/../util/util.h cmd/../artifacts/runjson.h \
  cmd/../artifacts/../util/secrets.h cmd/../snapshot/snapshot.h \
  cmd/../snapshot/../manifest/manifest.h \
  cmd/../snapshot/../manifest/../util/util.h cmd/../manifest/manifest.h \
  cmd/../manifest/netrule.h cmd/../llm/modelspec.h \
  cmd/../llm/../manifest/manifest.h cmd/../run/run.h \
  cmd/../run/../manifest/manifest.h cmd/../util/privacy.h cmd/cmd.h \
  cmd/../util/term.h cmd/../util/util.h

cmd/../artifacts/diff.h:

cmd/../artifacts/../util/util.h:

cmd/../artifacts/runjson.h:

cmd/../artifacts/../util/secrets.h:

cmd/../snapshot/snapshot.h:

cmd/../snapshot/../manifest/manifest.h:

cmd/../snapshot/../manifest/../util/util.h:

cmd/../manifest/manifest.h:

cmd/../manifest/netrule.h:

cmd/../llm/modelspec.h:

cmd/../llm/../manifest/manifest.h:

cmd/../run/run.h:

cmd/../run/../manifest/manifest.h:

cmd/../util/privacy.h:

cmd/cmd.h:

cmd/../util/term.h:

cmd/../util/util.h:
