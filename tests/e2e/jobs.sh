#!/usr/bin/env bash
# Delegation as nested jobs, a job's timeout, retries of transient model failures, the workspace lock.
source "$(dirname "$0")/lib.sh"
mkdir -p "$T/ws"
cat > "$T/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  boss:
    provider: scripted
    replies:
      - tool_calls: [ {name: helper, arguments: {input: "count to three"}} ]
      - tool_calls: [ {name: stranger, arguments: {input: "hi"}} ]
      - tool_calls: [ {name: final_result, arguments: {got: "done"}} ]
  helper: { provider: scripted, replies: [ {tool_calls: [ {name: final_result, arguments: {count: 3}} ]} ] }
  slow: { provider: scripted, replies: [ {tool_calls: [ {name: shell, arguments: {command: "sleep 60"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  boss:
    model: boss
    instructions: Delegate.
    delegates: [helper, stranger]
    approval:
      rules:
        - { worker: helper, decision: allow }
  helper: { model: helper, instructions: Count., output: { type: object, required: [count], properties: { count: { type: integer } } } }
  stranger: { model: helper, instructions: x }
  slow: { model: slow, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  boss: { worker: boss }
  slow: { worker: slow, timeout: 1s }
YAML
dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "a timed-out job fails the run" 1 "$rc"
js() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"]; print(j[sys.argv[2]].get(sys.argv[3]))' "$dir/run.json" "$1" "$2"; }
expect_eq "the delegating job succeeded" succeeded "$(js boss status)"
expect_eq "the delegate ran as a nested job" succeeded "$(js boss.helper-1 status)"
expect_eq "the nested job names its parent" boss "$(js boss.helper-1 parent)"
check "the nested job has its own events" test -f "$dir/jobs/boss.helper-1/events.jsonl.zst"
check "its typed output came back as the tool result" bash -c "zstd -dcq '$dir/jobs/boss/events.jsonl.zst' | python3 -c '
import json, sys
msgs = [m for l in sys.stdin for m in json.loads(l).get(\"messages\", [])]
sys.exit(not any(m.get(\"name\") == \"helper\" and json.loads(m[\"content\"]) == {\"count\": 3} for m in msgs))'"
check "a delegate no rule allows is denied" bash -c "zstd -dcq '$dir/jobs/boss/events.jsonl.zst' | grep -q '\"tool\":\"stranger\".*\"decision\":\"deny\"'"
check "the denied delegate never ran" test ! -d "$dir/jobs/boss.stranger-2"
expect_eq "the job's timeout failed it" failed "$(js slow status)"
expect_grep "and says so" "job slow: failed: the job's timeout \(1s\) ran out" "$T/err"
expect_grep "its step was stopped at the job's timeout, not its own 10 minutes" "job slow: step [0-9]+: shell sleep 60: allow \(default\): stopped at the job's timeout" "$T/err"
check "the step's result says the job's timeout stopped it" bash -c "zstd -dcq '$dir/jobs/slow/events.jsonl.zst' | grep tool_result | grep -q '\"job_timeout\":true'"
check "the run verifies, nested job included" "$NS" audit "$dir" --verify

# retries: a 500 the model's own retries (0) don't absorb is asked again by the job's retries.
printf '%s' '[{"error": 500}, {"openai_calls": [["final_result", {"ok": true}]]}]' > "$T/script.json"
python3 "$ROOT/tests/mockmodel.py" "$T/script.json" "$T/port" "$T/mock.log" & mp=$!
waitfor 60 test -s "$T/port"
cat > "$T/r.yaml" <<YAML
version: 1
workspace: ws
models:
  default: { provider: openai, base_url: "http://127.0.0.1:$(cat "$T/port")/v1", model: m, retries: 0 }
workers:
  w: { instructions: x }
jobs:
  once: { worker: w, retries: 1 }
YAML
dir=$("$NS" run "$T/r.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
kill $mp; wait $mp 2>/dev/null
expect_rc "a transient failure retried by the job succeeds" 0 "$rc"
expect_grep "the retry is reported" "retrying \(1 of 1\)" "$T/err"
expect_eq "the model was asked twice" 2 "$(wc -l < "$T/mock.log")"

# the lock: a second run on the same workspace is refused while the first holds it. The first
# run's step says it runs (ws/held), then waits (up to 2 minutes) until the test lets it go.
rm -f "$T/ws/held" "$T/ws/release"
cat > "$T/l.yaml" <<'YAML'
version: 1
workspace: ws
models:
  d: { provider: scripted, replies: [ {tool_calls: [ {name: shell, arguments: {command: "touch held; n=0; until [ -e release ] || [ $n -ge 2400 ]; do sleep 0.05; n=$((n+1)); done"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: d, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
"$NS" run "$T/l.yaml" --out "$T/runs" >/dev/null 2>"$T/err1" & first=$!
waitfor 60 test -e "$T/ws/held"
"$NS" run "$T/l.yaml" --out "$T/runs" >"$T/out" 2>"$T/err"; rc=$?
touch "$T/ws/release"
expect_rc "a second run on a held workspace: exit 2" 2 "$rc"
expect_grep "the error names the holder" "is in use by another run \(pid $first, .*nightshift run" "$T/err"
check "nothing printed on stdout" test ! -s "$T/out"
wait $first; rc=$?
expect_rc "the first run finished" 0 $rc; [ "$rc" = 0 ] || cat "$T/err1"
rm -f "$T/ws/held" "$T/ws/release"
# runs kept inside the workspace (workspace: . with runs/ beside the manifest) are no part of it
mkdir -p "$T/inws"
cat > "$T/inws/m.yaml" <<'YAML'
version: 1
workspace: .
models:
  d:
    provider: scripted
    replies:
      - tool_calls: [ {name: shell, arguments: {command: "touch runs/planted"}} ]
      - tool_calls: [ {name: write_file, arguments: {path: runs/x, content: "x"}} ]
      - tool_calls: [ {name: read_file, arguments: {path: m.yaml}} ]
      - tool_calls: [ {name: final_result, arguments: {}} ]
workers:
  w: { model: d, instructions: x, tools: [shell, write_file, read_file], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
dir=$("$NS" run "$T/inws/m.yaml" 2>"$T/err"); rc=$?
expect_rc "a run with its runs/ inside the workspace" 0 "$rc"
check "it went to runs/ beside the manifest" test -d "$T/inws/runs" -a "$(dirname "$dir")" = "$T/inws/runs"
check "a step cannot write into the runs folder" test ! -e "$T/inws/runs/planted"
check "and the step saw it fail" bash -c "zstd -dcq '$dir/jobs/j/events.jsonl.zst' | grep '\"type\":\"tool_result\"' | head -n1 | grep -q 'Read-only file system'"
check "write_file is refused there" bash -c "zstd -dcq '$dir/jobs/j/events.jsonl.zst' | grep -q '\"path\":\"runs/x\".*\"decision\":\"deny\".*not part of the workspace'"
check "the snapshots leave it out" bash -c "! tar --zstd -tf '$dir/snapshots/0001.tar.zst' | grep -q '^runs'"
check "the snapshots hold the rest" bash -c "tar --zstd -tf '$dir/snapshots/0001.tar.zst' | grep -q '^m.yaml'"
done_tests
