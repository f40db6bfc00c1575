#!/usr/bin/env bash
# The job graph: a diamond with -j 2, outputs flowing through expressions, a failure skipping
# its dependants, continue_on_error, --job selecting a job with what it needs.
source "$(dirname "$0")/lib.sh"
mkdir -p "$T/ws"
echo hi > "$T/ws/a.txt"
cat > "$T/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  top: { provider: scripted, replies: [ {tool_calls: [ {name: list_dir, arguments: {path: .}} ]}, {tool_calls: [ {name: final_result, arguments: {word: alpha, n: 1}} ]} ] }
  left: { provider: scripted, replies: [ {tool_calls: [ {name: read_file, arguments: {path: a.txt}} ]}, {tool_calls: [ {name: final_result, arguments: {word: beta, n: 2}} ]} ] }
  right: { provider: scripted, replies: [ {tool_calls: [ {name: read_file, arguments: {path: a.txt}} ]}, {tool_calls: [ {name: final_result, arguments: {word: gamma, n: 3}} ]} ] }
  bottom: { provider: scripted, replies: [ {tool_calls: [ {name: final_result, arguments: {word: delta, n: 4}} ]} ] }
  broken: { provider: scripted, replies: [ {text: "no result, ever"} ] }
workers:
  top: { model: top, instructions: x, tools: [list_dir], approval: { default: allow }, output: { type: object, required: [word] } }
  left: { model: left, instructions: x, tools: [read_file], approval: { default: allow } }
  right: { model: right, instructions: x, tools: [read_file], approval: { default: allow } }
  bottom: { model: bottom, instructions: x }
  broken: { model: broken, instructions: x, max_turns: 1 }
jobs:
  top: { worker: top, input: "start" }
  left: { worker: left, needs: [top], input: "from ${{ jobs.top.output.word }}" }
  right: { worker: right, needs: [top], input: "n=${{ jobs.top.output.n }}" }
  bottom: { worker: bottom, needs: [left, right], input: "${{ jobs.left.output.word }}+${{ jobs.right.output.word }}" }
  fails: { worker: broken }
  after: { worker: bottom, needs: [fails] }
  tolerant: { worker: broken, continue_on_error: true }
  still: { worker: bottom, needs: [tolerant] }
YAML
dir=$("$NS" run "$T/m.yaml" -j 2 --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "a failed job makes the run exit 1" 1 "$rc"
st() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][sys.argv[2]]["status"])' "$dir/run.json" "$1"; }
for j in top left right bottom still; do expect_eq "$j succeeded" succeeded "$(st $j)"; done
expect_eq "fails failed" failed "$(st fails)"
expect_eq "after skipped" skipped "$(st after)"
expect_eq "tolerant failed" failed "$(st tolerant)"
expect_grep "a skipped job says why" "job after: skipped: job 'fails' it needs did not succeed" "$T/err"
check "left got top's word" bash -c "zstd -dcq '$dir/jobs/left/events.jsonl.zst' | head -n1 | grep -q '\"input\":\"from alpha\"'"
check "right got top's number" bash -c "zstd -dcq '$dir/jobs/right/events.jsonl.zst' | head -n1 | grep -q '\"input\":\"n=1\"'"
check "bottom got both" bash -c "zstd -dcq '$dir/jobs/bottom/events.jsonl.zst' | head -n1 | grep -q '\"input\":\"beta+gamma\"'"
# order: each job starts after what it needs ended (from the stderr progress lines)
line() { grep -n "$1" "$T/err" | head -n1 | cut -d: -f1; }
check "left starts after top ended" test "$(line 'job left: started')" -gt "$(line 'job top: succeeded')"
check "right starts after top ended" test "$(line 'job right: started')" -gt "$(line 'job top: succeeded')"
check "bottom starts after left ended" test "$(line 'job bottom: started')" -gt "$(line 'job left: succeeded')"
check "bottom starts after right ended" test "$(line 'job bottom: started')" -gt "$(line 'job right: succeeded')"
check "the read-only jobs left and right ran side by side" bash -c "grep -q 'job left: started (worker left, read-only)' '$T/err' && grep -q 'job right: started (worker right, read-only)' '$T/err'"
check "the run verifies" "$NS" audit "$dir" --verify

dir=$("$NS" run "$T/m.yaml" --job left --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "--job left runs" 0 "$rc"
expect_eq "--job runs the job and what it needs, nothing else" "left top" \
	"$(python3 -c 'import json,sys; print(" ".join(sorted(json.load(open(sys.argv[1]))["jobs"])))' "$dir/run.json")"
"$NS" run "$T/m.yaml" --job nope --out "$T/runs" 2>"$T/err"; rc=$?
expect_rc "--job unknown: usage error" 2 "$rc"
expect_grep "--job unknown: names it" "--job nope: no such job" "$T/err"
done_tests
