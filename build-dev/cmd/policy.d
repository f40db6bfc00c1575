build-dev/cmd/policy.o: cmd/policy.c cmd/cmd.h cmd/../manifest/manifest.h \
 cmd/../manifest/../util/util.h cmd/../util/term.h cmd/../util/util.h \
 cmd/../policy/policy.h cmd/../policy/../manifest/manifest.h \
 cmd/../policy/../util/path.h cmd/../run/redecide.h \
 cmd/../run/../manifest/manifest.h cmd/../policy/decide.h \
 cmd/../policy/policy.h cmd/../policy/protect.h cmd/../util/glob.h \
 cmd/../util/util.h
cmd/cmd.h:
cmd/../manifest/manifest.h:
cmd/../manifest/../util/util.h:
cmd/../util/term.h:
cmd/../util/util.h:
cmd/../policy/policy.h:
cmd/../policy/../manifest/manifest.h:
cmd/../policy/../util/path.h:
cmd/../run/redecide.h:
cmd/../run/../manifest/manifest.h:
cmd/../policy/decide.h:
cmd/../policy/policy.h:
cmd/../policy/protect.h:
cmd/../util/glob.h:
cmd/../util/util.h:
