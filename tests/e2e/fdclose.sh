#!/usr/bin/env bash
# fdclose: no descriptor is closed twice. Jobs run in threads: a second close of a number another
# thread has opened meanwhile closes that thread's file under it (write_file closed its temporary
# file twice, and a concurrent job's snapshot then failed with "Bad file descriptor"). Every close
# of a descriptor that was not open is caught by tests/fixtures/closewatch.c, preloaded into
# nightshift, while jobs use each tool at once.
source "$(dirname "$0")/lib.sh"
if [ -n "${NS_VALGRIND:-}" ]; then
	skip fdclose "under valgrind nightshift runs from a wrapper, whose shell and valgrind the shim would watch too"
	done_tests
	exit
fi
cc -shared -fPIC -o "$T/closewatch.so" "$ROOT/tests/fixtures/closewatch.c" -ldl 2>"$T/cc.err" || cat "$T/cc.err"
check "the shim builds" test -f "$T/closewatch.so"
backend=none
userns && backend=namespace
for r in a b c; do mkdir -p "$T/ws/$r/src"; echo "$r" >"$T/ws/$r/src/name"; echo old >"$T/ws/$r/old.txt"; done
cat >"$T/m.yaml" <<YAML
version: 1
workspace: ws
sandbox: { backend: $backend }
models:
  s:
    provider: scripted
    replies:
      - tool_calls: [ {name: shell, arguments: {command: "cat src/name; echo one > one.txt"}} ]
      - tool_calls: [ {name: write_file, arguments: {path: new.txt, content: "new\n"}}, {name: write_file, arguments: {path: old.txt, content: "over\n"}} ]
      - tool_calls: [ {name: edit_file, arguments: {path: new.txt, old: "new", new: "edited"}} ]
      - tool_calls: [ {name: read_file, arguments: {path: old.txt}}, {name: list_dir, arguments: {path: .}} ]
      - tool_calls: [ {name: shell, arguments: {command: "cat new.txt old.txt"}} ]
      - tool_calls: [ {name: final_result, arguments: {}} ]
workers:
  w: { model: s, instructions: x, tools: [shell, write_file, edit_file, read_file, list_dir], approval: { default: allow } }
jobs:
  j:
    worker: w
    matrix: { r: [a, b, c] }
    workspace: ws/\${{ matrix.r }}
YAML
# Under ASan the shim must come after the sanitizer's runtime.
pre=$T/closewatch.so
asan=$(ldd "$NS" 2>/dev/null | awk '/libasan/ {print $3}')
[ -n "$asan" ] && pre="$asan:$pre"
for round in 1 2 3; do
	dir=$(CLOSEWATCH_LOG="$T/closes" LD_PRELOAD=$pre "$NS" run "$T/m.yaml" -j 3 --out "$T/runs" 2>"$T/err"); rc=$?
	expect_rc "round $round: three jobs using every tool at once" 0 "$rc"; [ "$rc" = 0 ] || cat "$T/err"
done
expect_eq "the files were written and edited" "edited over" "$(cat "$T/ws/b/new.txt" "$T/ws/b/old.txt" | tr '\n' ' ' | sed 's/ $//')"
check "no descriptor was closed that was not open" test ! -s "$T/closes"
[ -s "$T/closes" ] && head -n 40 "$T/closes"
check "the last run verifies" "$NS" audit "$dir" --verify
done_tests
