#!/usr/bin/env bash
# A run killed with SIGKILL: verify accepts it as incomplete, the next run points at it, finalize
# seals it so that verify, restore and audit take it as a finished run.
source "$(dirname "$0")/lib.sh"
mkdir -p "$T/ws" && echo data > "$T/ws/a.txt"
mark=$$$RANDOM # a sleep of its own: other tests' (and other checkouts') sleeps are not it
cat > "$T/m.yaml" <<YAML
version: 1
workspace: ws
models:
  d: { provider: scripted, replies: [ {tool_calls: [ {name: shell, arguments: {command: "echo step1 > b.txt"}} ]}, {tool_calls: [ {name: shell, arguments: {command: "sleep 39.0$mark"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: d, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
"$NS" run "$T/m.yaml" --out "$T/runs" > "$T/out" 2>/dev/null & p=$!
waitfor 60 running "sleep 39.0$mark"
kill -9 $p; wait $p 2>/dev/null
pkill -f "sleep 39.0$mark"
run=$(ls -d "$T"/runs/2* | head -n1)
"$NS" audit "$run" --verify 2>"$T/err"
expect_rc "a killed, unsealed run is INCOMPLETE: exit 4" 4 $?
expect_grep "as incomplete" "INCOMPLETE: the run was not sealed" "$T/err"
"$NS" run "$T/m.yaml" --out "$T/runs" --job j >/dev/null 2>"$T/err2" & p=$!
waitfor 60 running "sleep 39.0$mark"
# run names sort by second only: the live one is the one that is not the first
live=$(ls -d "$T"/runs/2* | grep -vxF "$run")
# a third run while the second is alive: the second is named as running, with its pid
mkdir -p "$T/ws3"
cat > "$T/m3.yaml" <<YAML
version: 1
workspace: ws3
models: { d: { provider: scripted, replies: [ {tool_calls: [ {name: final_result, arguments: {}} ]} ] } }
workers: { w: { model: d, instructions: x } }
jobs: { j: { worker: w } }
YAML
"$NS" run "$T/m3.yaml" --out "$T/runs" >/dev/null 2>"$T/err3"
expect_grep "a live run is said to be running, with its pid" "$(basename "$live") is still running \\(pid $p\\)" "$T/err3"
expect_nogrep "and not as killed" "$(basename "$live") never finished" "$T/err3"
expect_grep "the killed one is said to be dead" "$(basename "$run") never finished and no process holds it" "$T/err3"
"$NS" finalize "$live" 2>"$T/err4"
expect_grep "finalize refuses the live run, naming its pid" "still running \\(pid $p\\)" "$T/err4"
kill -TERM $p; wait $p 2>/dev/null
expect_grep "the next run points at the unfinished one" "$(basename "$run") never finished .*nightshift finalize" "$T/err2"
"$NS" finalize "$run" 2>"$T/err"
expect_rc "finalize seals it" 0 $?
check "sha256sum -c passes" bash -c "cd '$run' && sha256sum -c --quiet SHA256SUMS"
"$NS" audit "$run" --verify 2>"$T/err"
expect_rc "verify accepts the sealed run" 0 $?
expect_nogrep "no longer incomplete to verify" "INCOMPLETE" "$T/err"
expect_grep "run.json says incomplete" '"status":[[:space:]]*"incomplete"' "$run/run.json"
python3 - "$run/run.json" "$ROOT" > "$T/fields" <<'PY'
import json, sys, hashlib
r = json.load(open(sys.argv[1]))
j = r["jobs"]["j"]
import re; print("started", bool(re.fullmatch(r"\d{4}-\d\d-\d\dT[0-9:.]+Z", r.get("started", ""))))
print("manifest", r.get("manifest", {}).get("sha256") == hashlib.sha256(open(sys.argv[1].rsplit("/", 1)[0] + "/manifest/m.yaml", "rb").read()).hexdigest())
print("usage", isinstance(r.get("usage", {}).get("input"), (int, float)) and isinstance(j.get("usage", {}).get("output"), (int, float)))
print("counts", j.get("turns"), j.get("steps"), j.get("worker"))
PY
expect_eq "finalize recovers start, manifest digest, usage, turns, steps and worker from the chain" \
	"started True
manifest True
usage True
counts 2 2 w" "$(cat "$T/fields")"
"$NS" audit "$run" > "$T/table"
expect_nogrep "no NaN in audit's summary" "nan" "$T/table"
expect_grep "the summary shows the tokens" "j +incomplete +tokens in 0 out 0" "$T/table"
check "restore works on the sealed run" "$NS" restore "$run" --step 2 --to "$T/restored"
check "the workspace before step 2 holds step 1's file" grep -q step1 "$T/restored/b.txt"
expect_eq "audit lists both calls" 2 "$("$NS" audit "$run" --json | wc -l)"
"$NS" finalize "$run" 2>"$T/err"
expect_rc "finalize twice: usage error" 2 $?
done_tests
