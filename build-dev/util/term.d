build-dev/util/term.o: util/term.c util/term.h util/util.h
util/term.h:
util/util.h:
