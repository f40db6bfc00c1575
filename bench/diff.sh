#!/usr/bin/env bash
# diff and report of a run whose step deletes DIFF_FILES (default 50 000) small files and keeps
# their 500 folders: a layer of that many whiteouts over a full layer of as many files. Peer in the
# same run: GNU `diff -r` of the two workspaces restored before and after the step (what a user
# would do by hand), whose restore time is shown apart.
. "$(dirname "$0")/lib.sh" # goal
set -eu
NS=${NIGHTSHIFT:-./nightshift}
N=${DIFF_FILES:-50000}
T=$(mktemp -d /tmp/ns-bench-diff.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/ws"
python3 - "$T/ws" "$N" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "d%d" % (i % 500))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%d" % i), "w") as f:
        f.write("line %d\n" % i)
PY
cat > "$T/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  s: { provider: scripted, replies: [ {tool_calls: [ {name: shell, arguments: {command: "find . -type f -delete"}} ]},
                                      {tool_calls: [ {name: shell, arguments: {command: "echo done > marker"}} ]},
                                      {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: s, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>/dev/null)
now() { date +%s%N; }
ms() { echo $((($2 - $1) / 1000000)); }
t0=$(now); "$NS" diff "$dir" --step 1 >"$T/d1" 2>&1; t1=$(now)
"$NS" diff "$dir" --step 2 >"$T/d2" 2>&1; t2=$(now)
"$NS" report "$dir" --out "$T/r.html" >/dev/null 2>&1; t3=$(now)
"$NS" restore "$dir" --step 1 --to "$T/before" 2>/dev/null
"$NS" restore "$dir" --step 2 --to "$T/after" 2>/dev/null; t4=$(now)
diff -r "$T/before" "$T/after" >"$T/gnu" 2>&1 || true; t5=$(now)
deleted=$(grep -c '^+++ /dev/null' "$T/d1" || true)
echo "files deleted by the step: $deleted of $N (nightshift diff --step 1 shows each)"
echo "nightshift diff --step 1 (the $N whiteouts):  $(ms "$t0" "$t1") ms"
echo "nightshift diff --step 2 (one file, after them): $(ms "$t1" "$t2") ms"
echo "nightshift report (every step's changes):        $(ms "$t2" "$t3") ms"
echo "peer: GNU diff -r of the two restored trees:     $(ms "$t4" "$t5") ms (the two restores: $(ms "$t3" "$t4") ms)"
echo "ratio nightshift diff --step 1 / GNU diff -r:    $(python3 -c "print(round(($t1 - $t0) / max(1, $t5 - $t4), 2))")"
goal "diff --step 1 ($N whiteouts)" "$(ms "$t0" "$t1")" ms '<=' 2000
goal "report (every step's changes)" "$(ms "$t2" "$t3")" ms '<=' 5000
goal "diff --step 1 / GNU diff -r" "$(python3 -c "print(round(($t1 - $t0) / max(1, $t5 - $t4), 2))")" x '<=' 1
