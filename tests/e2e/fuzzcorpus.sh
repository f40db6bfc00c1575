#!/usr/bin/env bash
# Every committed fuzz input (tests/fuzz/corpus/NAME) run once through its target, built by make
# check with a plain main (tests/fuzz/replay.c): a crash, a broken invariant, and under
# SANITIZE=1 any ASan, UBSan or leak report fails it.
. "$(dirname "$0")/lib.sh"
bin=${FUZZBIN:-$(dirname "${TESTBIN:-/nonexistent/tests}")/fuzz}
for src in "$ROOT"/tests/fuzz/fuzz_*.c; do
	name=$(basename "$src" .c)
	if [ ! -x "$bin/$name" ]; then
		skip "$name" "no $bin/$name (make check builds it)"
		continue
	fi
	corpus=$ROOT/tests/fuzz/corpus/${name#fuzz_}
	want=$(find "$corpus" -maxdepth 1 -type f ! -name '.*' | wc -l)
	"$bin/$name" "$corpus" >"$T/out" 2>"$T/err"
	rc=$?
	expect_rc "$name: every input of its corpus" 0 $rc
	expect_eq "$name: $want inputs ran" "$want passed, 0 failed" "$(tail -n1 "$T/out")"
	[ $rc = 0 ] || head -c 3000 "$T/err"
done
done_tests
