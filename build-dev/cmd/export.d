build-dev/cmd/export.o: cmd/export.c cmd/../util/term.h cmd/cmd.h \
 cmd/../manifest/manifest.h cmd/../manifest/../util/util.h \
 cmd/../util/util.h cmd/../artifacts/otlp.h \
 cmd/../artifacts/../util/util.h cmd/../llm/http.h \
 cmd/../llm/../util/jsonb.h cmd/../llm/../util/util.h
cmd/../util/term.h:
cmd/cmd.h:
cmd/../manifest/manifest.h:
cmd/../manifest/../util/util.h:
cmd/../util/util.h:
cmd/../artifacts/otlp.h:
cmd/../artifacts/../util/util.h:
cmd/../llm/http.h:
cmd/../llm/../util/jsonb.h:
cmd/../llm/../util/util.h:
