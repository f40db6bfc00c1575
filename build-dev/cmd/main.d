build-dev/cmd/main.o: cmd/main.c cmd/cmd.h cmd/../manifest/manifest.h \
 cmd/../manifest/../util/util.h cmd/../util/term.h cmd/../util/util.h \
 cmd/../sandbox/sandbox.h cmd/../sandbox/../manifest/manifest.h \
 cmd/../sandbox/../net/egress.h \
 cmd/../sandbox/../net/../manifest/manifest.h
cmd/cmd.h:
cmd/../manifest/manifest.h:
cmd/../manifest/../util/util.h:
cmd/../util/term.h:
cmd/../util/util.h:
cmd/../sandbox/sandbox.h:
cmd/../sandbox/../manifest/manifest.h:
cmd/../sandbox/../net/egress.h:
cmd/../sandbox/../net/../manifest/manifest.h:
