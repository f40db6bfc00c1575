#!/usr/bin/env bash
# SIGTERM/SIGINT mid-step: exit 130 promptly, no process left, the run still verifies.
source "$(dirname "$0")/lib.sh"
mkdir -p "$T/ws"
mark=$$$RANDOM # sleeps of their own: other tests' (and other checkouts') sleeps are not them
cat > "$T/m.yaml" <<YAML
version: 1
workspace: ws
models:
  d: { provider: scripted, replies: [ {tool_calls: [ {name: shell, arguments: {command: "sleep 37.0$mark & sleep 38.0$mark; echo done"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: d, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  a: { worker: w }
  b: { worker: w, needs: [a] }
YAML
for sig in TERM INT; do
	"$NS" run "$T/m.yaml" --out "$T/runs" > "$T/out" 2> "$T/err" & p=$!
	# wait until the step runs, then signal
	waitfor 60 running "sleep 38.0$mark"
	start=$(date +%s%N)
	kill -$sig $p
	wait $p; rc=$?
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	echo "SIG$sig: exited in $ms ms"
	expect_rc "SIG$sig mid-step: exit 130" 130 "$rc"
	# Promptly: well before the step's sleeps would have ended by themselves.
	check "SIG$sig: exited before the step would have ended (measured ${ms} ms)" test "$ms" -lt 30000
	check "SIG$sig: no process of the step left" gone "sleep 3[78].0$mark" 10
	dir=$(cat "$T/out")
	check "SIG$sig: the run directory is printed" test -d "$dir"
	check "SIG$sig: the run verifies" "$NS" audit "$dir" --verify
	expect_grep "SIG$sig: the job is marked cancelled" '"status":[[:space:]]*"cancelled"' "$dir/run.json"
	check "SIG$sig: job_end written for the cancelled job" bash -c "zstd -dcq '$dir/jobs/a/events.jsonl.zst' | grep -q '\"type\":\"job_end\".*\"status\":\"cancelled\"'"
	check "SIG$sig: the step is recorded as interrupted" bash -c "zstd -dcq '$dir/jobs/a/events.jsonl.zst' | grep '\"type\":\"tool_result\"' | grep -q '\"timed_out\":false.*\"interrupted\":true'"
	check "SIG$sig: no step is said to have timed out" bash -c "! grep -q 'timed out' '$T/err'"
	check "SIG$sig: the job after it never started" bash -c "python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))[\"jobs\"][\"b\"]; sys.exit(j[\"status\"] != \"cancelled\" or \"events_head\" in j)' '$dir/run.json'"
done
done_tests
