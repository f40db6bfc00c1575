build-dev/cmd/doctor.o: cmd/doctor.c cmd/cmd.h cmd/../manifest/manifest.h \
 cmd/../manifest/../util/util.h cmd/../util/term.h cmd/../util/util.h \
 cmd/../run/doctor.h cmd/../run/../manifest/manifest.h
cmd/cmd.h:
cmd/../manifest/manifest.h:
cmd/../manifest/../util/util.h:
cmd/../util/term.h:
cmd/../util/util.h:
cmd/../run/doctor.h:
cmd/../run/../manifest/manifest.h:
