# nightshift: `make` builds ./nightshift, `make check` runs every test, `make bench` the benchmarks.
# SANITIZE=1 builds with ASan+UBSan into build-san/.

PKGS = libcurl libcjson yaml-0.1 libarchive libzstd libseccomp libcrypto
CC ?= cc
CFLAGS ?= -O2 -g
ifeq ($(SANITIZE),1)
O ?= build-san
CFLAGS += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
else
O ?= build
endif
CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -MMD -MP $(shell pkg-config --cflags $(PKGS))
LDLIBS += $(shell pkg-config --libs $(PKGS)) -lpthread -lm

LIBSRC = $(wildcard util/*.c manifest/*.c runner/*.c runner/llm/*.c runner/sandbox/*.c artifacts/*.c)
CMDSRC = $(wildcard cmd/*.c)
TESTSRC = $(wildcard tests/unit/test_*.c)
LIBOBJ = $(LIBSRC:%.c=$(O)/%.o)
CMDOBJ = $(CMDSRC:%.c=$(O)/%.o)
TESTBIN = $(TESTSRC:tests/unit/%.c=$(O)/tests/%)

all: nightshift

nightshift: $(O)/nightshift
	cp $< $@

$(O)/nightshift: $(CMDOBJ) $(O)/libnightshift.a
	$(CC) $(LDFLAGS) -o $@ $(CMDOBJ) $(O)/libnightshift.a $(LDLIBS)

$(O)/libnightshift.a: $(LIBOBJ)
	rm -f $@
	ar rcs $@ $(LIBOBJ)

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(O)/tests/%: tests/unit/%.c $(O)/libnightshift.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(O)/libnightshift.a $(LDLIBS)

tests: $(TESTBIN)

# Every test: unit binaries, then end-to-end scripts against the real binary.
check: $(O)/nightshift $(TESTBIN)
	NIGHTSHIFT=$(abspath $(O))/nightshift TESTBIN=$(abspath $(O))/tests bash tests/run $(T)

bench: $(O)/nightshift
	NIGHTSHIFT=$(abspath $(O))/nightshift bash bench/run $(B)

clean:
	rm -rf build build-san nightshift

-include $(LIBOBJ:.o=.d) $(CMDOBJ:.o=.d) $(TESTBIN:=.d)

.PHONY: all nightshift tests check bench clean
