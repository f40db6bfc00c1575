# nightshift: `make` builds ./nightshift, `make check` runs every test, `make bench` the benchmarks.
# SANITIZE=1 builds with ASan+UBSan into build-san/. `make fuzz` builds the libFuzzer targets of
# tests/fuzz/ with clang, ASan and UBSan into build-fuzz/fuzz/ (docs/testing.md says how to run them).

PKGS = libcurl libcjson yaml-0.1 libarchive libzstd libseccomp libcrypto zlib
# The user's CC, CFLAGS and LDFLAGS are theirs (make CFLAGS=-O0, make CC=clang); the project's own
# flags are added in ALL_CFLAGS and ALL_LDFLAGS, as samurai does.
CC ?= cc
CFLAGS ?= -O2 -g
ifeq ($(FUZZ),1)
O ?= build-fuzz
CC = clang
MODE_CFLAGS = -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
MODE_LDFLAGS = -fsanitize=fuzzer,address,undefined
else ifeq ($(SANITIZE),1)
O ?= build-san
MODE_CFLAGS = -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
MODE_LDFLAGS = -fsanitize=address,undefined
else
O ?= build
endif
WARN = -Wall -Wextra -Wshadow -Wmissing-prototypes -Wstrict-prototypes
ALL_CFLAGS = $(CFLAGS) $(MODE_CFLAGS) -std=c11 -D_GNU_SOURCE $(WARN) -MMD -MP $(shell pkg-config --cflags $(PKGS))
ALL_LDFLAGS = $(LDFLAGS) $(MODE_LDFLAGS)
LDLIBS += $(shell pkg-config --libs $(PKGS)) -lpthread -lm

# The rooms of the engine, one concept each (README's layout; tests/e2e/layering.sh holds the
# direction they may use each other in).
ROOMS = util manifest snapshot artifacts net sandbox policy llm mcp run
LIBSRC = $(foreach r,$(ROOMS),$(wildcard $(r)/*.c))
CMDSRC = $(wildcard cmd/*.c)
TESTSRC = $(wildcard tests/unit/test_*.c)
LIBOBJ = $(LIBSRC:%.c=$(O)/%.o)
CMDOBJ = $(CMDSRC:%.c=$(O)/%.o)
TESTBIN = $(TESTSRC:tests/unit/%.c=$(O)/tests/%)
# Fuzz targets: with libFuzzer's main under FUZZ=1, else with tests/fuzz/replay.c's, which make
# check uses to run every committed corpus input once.
FUZZSRC = $(wildcard tests/fuzz/fuzz_*.c)
FUZZBIN = $(FUZZSRC:tests/fuzz/%.c=$(O)/fuzz/%)
FUZZMAIN = $(if $(filter 1,$(FUZZ)),,tests/fuzz/replay.c)

all: nightshift

nightshift: $(O)/nightshift
	cp $< $@

$(O)/nightshift: $(CMDOBJ) $(O)/gen/recipes.o $(O)/libnightshift.a
	$(CC) $(ALL_LDFLAGS) -o $@ $(CMDOBJ) $(O)/gen/recipes.o $(O)/libnightshift.a $(LDLIBS)

# The recipes of examples/ (those with a workflow in ci/examples/), embedded for `nightshift init`.
RECIPESRC = $(shell find examples ci/examples -type f)
$(O)/gen/recipes.c: cmd/recipes.sh pkg/examples.sh $(RECIPESRC)
	@mkdir -p $(dir $@)
	sh cmd/recipes.sh >$@.tmp && mv $@.tmp $@

$(O)/gen/recipes.o: $(O)/gen/recipes.c cmd/recipes.h
	$(CC) $(ALL_CFLAGS) -I. -c -o $@ $<

# cmd/'s files but main, for the unit tests of what cmd/ holds (the Actions output).
$(O)/libcmd.a: $(filter-out $(O)/cmd/main.o,$(CMDOBJ)) $(O)/gen/recipes.o
	rm -f $@
	ar rcs $@ $^

$(O)/libnightshift.a: $(LIBOBJ)
	rm -f $@
	ar rcs $@ $(LIBOBJ)

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(O)/tests/%: tests/unit/%.c $(O)/libcmd.a $(O)/libnightshift.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(O)/libcmd.a $(O)/libnightshift.a $(LDLIBS)

$(O)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(FUZZMAIN) $(O)/libnightshift.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(FUZZMAIN) $(O)/libnightshift.a $(LDLIBS)

tests: $(TESTBIN)

fuzz:
	$(MAKE) FUZZ=1 fuzzers

fuzzers: $(FUZZBIN)

# Every test: unit binaries, then end-to-end scripts against the real binary.
check: $(O)/nightshift $(TESTBIN) $(FUZZBIN)
	NIGHTSHIFT=$(abspath $(O))/nightshift TESTBIN=$(abspath $(O))/tests bash tests/run $(T)

# Every test again under valgrind memcheck (slow): invalid accesses and leaks fail.
valgrind: $(O)/nightshift $(TESTBIN) $(FUZZBIN)
	NIGHTSHIFT=$(abspath $(O))/nightshift TESTBIN=$(abspath $(O))/tests bash tests/valgrind $(T)

bench: $(O)/nightshift
	NIGHTSHIFT=$(abspath $(O))/nightshift bash bench/run $(B)

# Installing: the binary, its man page (made from its own --help texts), bash and zsh completion.
PREFIX ?= /usr/local
BINDIR = $(PREFIX)/bin
MANDIR = $(PREFIX)/share/man
BASHDIR = $(PREFIX)/share/bash-completion/completions
ZSHDIR = $(PREFIX)/share/zsh/vendor-completions
EXAMPLEDIR = $(PREFIX)/share/doc/nightshift/examples
NS = $(O)/nightshift

$(O)/nightshift.1: $(O)/nightshift pkg/mkman.sh
	sh pkg/mkman.sh $(O)/nightshift >$@

install: $(O)/nightshift $(O)/nightshift.1
	$(MAKE) install-files NS=$(O)/nightshift

# What install copies, from a binary already built (NS): mkdeb.sh stages the package with it.
install-files:
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHDIR) $(DESTDIR)$(ZSHDIR) $(DESTDIR)$(EXAMPLEDIR)
	install -m 755 $(NS) $(DESTDIR)$(BINDIR)/nightshift
	sh pkg/mkman.sh $(NS) | gzip -9n >$(DESTDIR)$(MANDIR)/man1/nightshift.1.gz
	install -m 644 pkg/nightshift.bash $(DESTDIR)$(BASHDIR)/nightshift
	install -m 644 pkg/_nightshift $(DESTDIR)$(ZSHDIR)/_nightshift
	@# the examples as shipped (pkg/examples.sh: never what git ignores, as the runs and the files
	@# an example writes when it is run), readable by every user whatever the checkout's umask
	sh pkg/examples.sh | tar --verbatim-files-from --ignore-failed-read -T - --mode=u+w,go-w,a+rX -cf - | \
		tar -C $(DESTDIR)$(EXAMPLEDIR) --strip-components=1 --no-same-owner -xf -

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/nightshift $(DESTDIR)$(MANDIR)/man1/nightshift.1.gz \
	      $(DESTDIR)$(BASHDIR)/nightshift $(DESTDIR)$(ZSHDIR)/_nightshift
	rm -rf $(DESTDIR)$(PREFIX)/share/doc/nightshift

# A Debian package in $(O)/ (pkg/mkdeb.sh): Depends found from the libraries the binary links.
deb: $(O)/nightshift
	sh pkg/mkdeb.sh $(abspath $(O))/nightshift $(abspath $(O))

clean:
	rm -rf build build-san build-fuzz nightshift

-include $(LIBOBJ:.o=.d) $(CMDOBJ:.o=.d) $(TESTBIN:=.d) $(FUZZBIN:=.d)

.PHONY: all nightshift tests check valgrind bench clean fuzz fuzzers install install-files uninstall deb
