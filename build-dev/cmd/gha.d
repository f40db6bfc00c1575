build-dev/cmd/gha.o: cmd/gha.c cmd/../artifacts/events.h \
 cmd/../artifacts/../util/util.h cmd/../artifacts/../util/secrets.h \
 cmd/../artifacts/../util/util.h cmd/../artifacts/modeltext.h \
 cmd/../artifacts/runjson.h cmd/gha.h cmd/../util/util.h \
 cmd/../util/term.h
cmd/../artifacts/events.h:
cmd/../artifacts/../util/util.h:
cmd/../artifacts/../util/secrets.h:
cmd/../artifacts/../util/util.h:
cmd/../artifacts/modeltext.h:
cmd/../artifacts/runjson.h:
cmd/gha.h:
cmd/../util/util.h:
cmd/../util/term.h:
