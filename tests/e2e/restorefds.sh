#!/usr/bin/env bash
# Restore under a low open-file limit: a tree 60 folders deep restores whole under `ulimit -n 20`
# (the folders kept open shrink to fit), and when descriptors do run out the error is the
# machine's (exit 1, "Too many open files"), never a verdict on the layers (exit 4).
source "$(dirname "$0")/lib.sh"
d=$T/ws
for i in $(seq 60); do d=$d/d$i; done
mkdir -p "$d" && echo deep > "$d/f"
cat > "$T/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  m: { provider: scripted, replies: [ {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
sandbox: { backend: none }
workers:
  w: { model: m, instructions: x }
jobs:
  j: { worker: w, input: go }
YAML
run=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); expect_rc "the night runs" 0 $?
(ulimit -n 20; "$NS" restore "$run" --step end --to "$T/out" 2>"$T/rerr"); expect_rc "restore under ulimit -n 20" 0 $?
check "the deep tree restored whole" diff -r "$T/ws" "$T/out"
(ulimit -n 9; "$NS" restore "$run" --step end --to "$T/out2" 2>"$T/rerr2"); rc=$?
expect_rc "under ulimit -n 9: a failure of the machine, not of the layers" 1 $rc
expect_grep "saying so" "Too many open files" "$T/rerr2"
done_tests
