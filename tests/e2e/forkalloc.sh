#!/usr/bin/env bash
# forkalloc: the namespace sandbox's helper and init, forked from a job's thread while other jobs'
# threads run, allocate nothing before they exec or end: a lock of the allocator another thread
# held at the fork would stay held in the child for good (with GCC 12's ASan a helper spun so
# forever, and its job waited 30 s for a set-up that never came). tests/fixtures/forkalloc.c,
# preloaded into nightshift, writes down any allocation in a child of fork.
source "$(dirname "$0")/lib.sh"
needuserns forkalloc
if [ -n "${NS_VALGRIND:-}" ]; then
	skip forkalloc "under valgrind nightshift runs from a wrapper, whose shell and valgrind the shim would watch too"
	done_tests
	exit
fi
if asan; then
	skip forkalloc "nightshift is built with ASan, whose allocator the shim cannot stand in for (the plain build runs it)"
	done_tests
	exit
fi
cc -shared -fPIC -o "$T/forkalloc.so" "$ROOT/tests/fixtures/forkalloc.c" 2>"$T/cc.err" || cat "$T/cc.err"
check "the shim builds" test -f "$T/forkalloc.so"
for r in a b c; do mkdir -p "$T/ws/$r"; done
mkdir -p "$T/data"
cat >"$T/m.yaml" <<YAML
version: 1
workspace: ws
sandbox: { mounts: [ {source: $T/data, target: /deep/down/data, mode: ro} ] }
models:
  s:
    provider: scripted
    replies:
      - tool_calls: [ {name: shell, arguments: {command: "echo one > one.txt"}} ]
      - tool_calls: [ {name: shell, arguments: {command: "ls /deep/down/data; cat one.txt"}} ]
      - tool_calls: [ {name: final_result, arguments: {}} ]
workers:
  w: { model: s, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j:
    worker: w
    matrix: { r: [a, b, c] }
    workspace: ws/\${{ matrix.r }}
YAML
dir=$(FORKALLOC_LOG="$T/allocs" LD_PRELOAD="$T/forkalloc.so" "$NS" run "$T/m.yaml" -j 3 --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the jobs run with the shim" 0 "$rc"; [ "$rc" = 0 ] || cat "$T/err"
check "each step ran" test "$(cat "$T/ws/a/one.txt" "$T/ws/b/one.txt" "$T/ws/c/one.txt" 2>/dev/null | wc -l)" = 3
check "no allocation in a child of fork before it execs or ends" test ! -s "$T/allocs"
[ -s "$T/allocs" ] && sort "$T/allocs" | uniq -c | head -n 20
done_tests
