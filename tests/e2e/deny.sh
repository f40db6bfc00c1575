#!/usr/bin/env bash
# Denials that count: approval.on_deny: fail and run --fail-on-deny fail the job a denied call came
# from; denials per job in run.json; calls after final_result in the same reply are logged as not run.
source "$(dirname "$0")/lib.sh"
mkdir -p "$T/ws"
cat > "$T/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  m:
    provider: scripted
    replies:
      - tool_calls: [ {name: shell, arguments: {command: "rm -rf notes"}} ]
      - tool_calls: [ {name: final_result, arguments: {}}, {name: shell, arguments: {command: "touch after-the-end"}} ]
workers:
  lenient:
    model: m
    instructions: x
    tools: [shell]
    approval: { default: deny, rules: [ {tool: shell, command: "touch *", decision: allow} ] }
  strict:
    model: m
    instructions: x
    tools: [shell]
    approval: { default: deny, on_deny: fail, rules: [ {tool: shell, command: "touch *", decision: allow} ] }
jobs:
  goes-on: { worker: lenient }
  stops: { worker: strict }
YAML
dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "a job with on_deny: fail fails the run" 1 "$rc"
js() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][sys.argv[2]].get(sys.argv[3]))' "$dir/run.json" "$1" "$2"; }
expect_eq "on_deny: continue (the default): the job goes on to its result" succeeded "$(js goes-on status)"
expect_eq "its denial is counted in run.json" 1 "$(js goes-on denials)"
expect_eq "on_deny: fail: the job fails" failed "$(js stops status)"
expect_grep "naming the call, the rule and why" "job stops: failed: step [0-9]+: shell denied by the default decision: .*\(approval.on_deny: fail\)" "$T/err"
expect_eq "and counts the denial" 1 "$(js stops denials)"
ev() { zstd -dcq "$dir/jobs/$1/events.jsonl.zst"; }
expect_eq "a call after final_result in the same reply is logged as not run" "shell not run: final_result ended the job before this call" \
	"$(ev goes-on | python3 -c 'import json,sys; e=[json.loads(l) for l in sys.stdin if "call_not_run" in l]; print(e[0]["tool"], e[0]["reason"]) if len(e) == 1 else print(len(e))')"
check "and it never ran" test ! -e "$T/ws/after-the-end"
expect_eq "no decision was made for it" 1 "$(ev goes-on | grep -c '"type":"decision"')"
check "the run verifies" "$NS" audit "$dir" --verify
# audit lists it, after the call before it, as not run: no step, no decision, no exit code
"$NS" audit "$dir" --job goes-on > "$T/audit" 2>&1
expect_grep "audit: the call after final_result is a row, not run" '^ +-  goes-on +shell +touch after-the-end +not run +- +- +-$' "$T/audit"
expect_grep "audit: it comes after the denied call of its job" '^ +[0-9]+  goes-on +shell +rm -rf notes +deny' "$T/audit"
python3 - "$T/audit" > "$T/order" <<'PY'
import sys
import re
rows = [l for l in open(sys.argv[1]) if re.match(r"^ +([0-9]+|-)  goes-on ", l)]
print("deny-then-notrun" if len(rows) == 2 and " deny " in rows[0] and "not run" in rows[1] else rows)
PY
expect_eq "audit: in the order they were asked" "deny-then-notrun" "$(cat "$T/order")"
expect_grep "audit: the tally counts it" 'shell not run: 1' "$T/audit"
expect_grep "audit: says why" '^  after step [0-9]+  goes-on  shell: not run: final_result ended the job before this call$' "$T/audit"
"$NS" audit "$dir" --json > "$T/audit.json" 2>&1
expect_eq "audit --json: one line says it was not run, with its arguments and why" \
	'goes-on None True not run {"command": "touch after-the-end"} not run: final_result ended the job before this call None' \
	"$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    c = json.loads(l)
    if c.get("not_run"): print(c["job"], c["step"], c["not_run"], c["decision"], json.dumps(c["arguments"]), c["reason"], c["exit_code"])' "$T/audit.json")"
expect_eq "audit --json: every call of the run, the not-run one included" 3 "$(wc -l < "$T/audit.json")"
expect_eq "audit --decision deny: the not-run call is no denial" 0 "$("$NS" audit "$dir" --json --decision deny | grep -c not_run)"

dir=$("$NS" run "$T/m.yaml" --out "$T/runs" --job goes-on --fail-on-deny 2>"$T/err"); rc=$?
expect_rc "run --fail-on-deny: a denial fails the job" 1 "$rc"
expect_eq "the lenient job failed" failed "$(js goes-on status)"
expect_grep "saying why" "shell denied by the default decision: .*\(--fail-on-deny\)" "$T/err"
sed -i 's/on_deny: fail/on_deny: sometimes/' "$T/m.yaml"
"$NS" validate "$T/m.yaml" 2>"$T/err"; rc=$?
expect_rc "a bad on_deny is refused" 2 "$rc"
expect_grep "at its place" "m.yaml:[0-9]+:[0-9]+: .*on_deny" "$T/err"
done_tests
