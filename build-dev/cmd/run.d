build-dev/cmd/run.o: cmd/run.c cmd/../artifacts/finalize.h \
 cmd/../artifacts/../util/util.h cmd/../artifacts/rundir.h \
 cmd/../artifacts/../manifest/manifest.h \
 cmd/../artifacts/../manifest/../util/util.h cmd/../artifacts/sign.h \
 cmd/../artifacts/../util/secrets.h cmd/../artifacts/../util/util.h \
 cmd/../artifacts/runjson.h cmd/../manifest/manifest.h \
 cmd/../util/cancel.h cmd/../util/privacy.h cmd/../llm/modelspec.h \
 cmd/../llm/../manifest/manifest.h cmd/../run/doctor.h \
 cmd/../run/../manifest/manifest.h cmd/gha.h cmd/../util/util.h \
 cmd/../run/run.h cmd/../run/shard.h cmd/../util/term.h cmd/cmd.h
cmd/../artifacts/finalize.h:
cmd/../artifacts/../util/util.h:
cmd/../artifacts/rundir.h:
cmd/../artifacts/../manifest/manifest.h:
cmd/../artifacts/../manifest/../util/util.h:
cmd/../artifacts/sign.h:
cmd/../artifacts/../util/secrets.h:
cmd/../artifacts/../util/util.h:
cmd/../artifacts/runjson.h:
cmd/../manifest/manifest.h:
cmd/../util/cancel.h:
cmd/../util/privacy.h:
cmd/../llm/modelspec.h:
cmd/../llm/../manifest/manifest.h:
cmd/../run/doctor.h:
cmd/../run/../manifest/manifest.h:
cmd/gha.h:
cmd/../util/util.h:
cmd/../run/run.h:
cmd/../run/shard.h:
cmd/../util/term.h:
cmd/cmd.h:
