#!/usr/bin/env bash
# layernames: layer names come from one module (snapshot/layername.h), and step 10,000 is a step
# like any other. A real run of four write_file steps is moved 9,997 steps later (renumber.py:
# layers 9998..10001, events, chains and digests made again, as a run of 10,001 steps would have
# them); it verifies, restores before every step, and its diffs read the layers in numeric order.
source "$(dirname "$0")/lib.sh"
for p in python3 zstd; do
	if ! command -v $p >/dev/null; then
		skip layernames "no $p"
		done_tests
		exit
	fi
done
mkdir -p "$T/ws"
python3 - >"$T/m.yaml" <<'PY'
import json
r = [{"tool_calls": [{"name": "write_file", "arguments": {"path": "a", "content": "%d" % i}}]} for i in range(1, 5)]
r.append({"tool_calls": [{"name": "final_result", "arguments": {}}]})
print("""version: 1
name: layernames
workspace: ws
sandbox: { backend: none }
models:
  m: { provider: scripted, replies: %s }
workers:
  w: { model: m, instructions: x, tools: [write_file], approval: { default: allow } }
jobs:
  j: { worker: w }""" % json.dumps(r))
PY
run=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err")
expect_rc "the run succeeds" 0 $?
[ -d "$run" ] || cat "$T/err"
python3 "$ROOT/tests/e2e/renumber.py" "$run" 9997
expect_eq "layers named past 9999" "10000.tar.zst 10001.tar.zst 9998.tar.zst 9999.tar.zst end.tar.zst" \
	"$(ls "$run/snapshots" | tr '\n' ' ' | sed 's/ $//')"
"$NS" audit --verify "$run" >"$T/out" 2>&1
expect_rc "the run of steps 9998..10001 verifies" 0 $?
expect_grep "with its four layers" 'verified: .* 4 layers' "$T/out"
want=([9998]="" [9999]=1 [10000]=2 [10001]=3)
for s in 9998 9999 10000 10001 end; do
	rm -rf "$T/r"
	"$NS" restore "$run" --step $s --to "$T/r" >/dev/null 2>"$T/err"
	expect_rc "restore --step $s" 0 $?
	[ $s = end ] && w=4 || w=${want[$s]}
	expect_eq "step $s: a as before it" "$w" "$(cat "$T/r/a" 2>/dev/null)"
done
"$NS" diff "$run" --step 10000 >"$T/d" 2>&1
expect_rc "diff --step 10000" 0 $?
expect_grep "step 10000 is read from layer 10001, after 10000" '^# step 10000: 1 change \(snapshots/10001.tar.zst\)' "$T/d"
expect_grep "its change 2 to 3" '^\+3' "$T/d"
"$NS" diff "$run" --step 9999 >"$T/d" 2>&1
expect_grep "step 9999 changes 1 to 2, from layer 10000" '^# step 9999: 1 change \(snapshots/10000.tar.zst\)' "$T/d"
"$NS" diff "$run" --step 10001 >"$T/d" 2>&1
expect_grep "the last step's change, 3 to 4, from the end layer" '^# step 10001: .*\(snapshots/end.tar.zst\), 1 change' "$T/d"
# a name that is not as the module writes it is no layer: 00001 is not step 1 again
cp "$run/snapshots/9998.tar.zst" "$run/snapshots/09998.tar.zst"
rm -rf "$T/r"
"$NS" restore "$run" --step 9999 --to "$T/r" >/dev/null 2>"$T/err"
expect_rc "an alias of a layer's name is left aside" 0 $?
expect_eq "and the restore is the same" "1" "$(cat "$T/r/a" 2>/dev/null)"
done_tests
