#!/usr/bin/env bash
# auditjsonctl: `audit --json` and `policy MANIFEST --run RUN --json` print a run's recorded text
# (a tool call's arguments, a decision's reason) as JSON that cannot drive a terminal: C1
# controls (U+009B, the 8-bit CSI) and bidirectional overrides (U+202E) come out as \u escapes,
# never as raw bytes, and the lines still parse to the very strings recorded.
source "$(dirname "$0")/lib.sh"

mkdir -p "$T/ws"
manifest() {  # manifest FILE DEFAULT
	cat >"$1" <<YAML
version: 1
workspace: ws
sandbox: { backend: none }
models:
  d: { provider: scripted, replies: [ {tool_calls: [ {name: shell, arguments: {command: "echo '\\u009b[31m red \\u202e evil \\u2066 \\u200f'"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: d, instructions: x, tools: [shell], approval: { default: $2 } }
jobs:
  j: { worker: w }
YAML
}
manifest "$T/m.yaml" allow
manifest "$T/deny.yaml" deny
run=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err")
expect_rc "a run whose call holds C1 and bidi controls" 0 $?

# inert FILE WHAT: every line parses, no raw U+009B, U+202E, U+2066, U+200F, and the recorded
# command comes back whole once parsed.
inert() {
	python3 - "$1" "$2" <<'PY'
import json, sys
raw = open(sys.argv[1], "rb").read()
bad = [b for b in ("\u009b", "\u202e", "\u2066", "\u200f") if b.encode() in raw]
if bad:
    sys.exit("%s: raw %s in the output" % (sys.argv[2], ", ".join("U+%04X" % ord(b) for b in bad)))
want = "echo '\u009b[31m red \u202e evil \u2066 \u200f'"
seen = False
for line in raw.decode().splitlines():
    o = json.loads(line)
    seen |= (o.get("arguments") or {}).get("command") == want
if not seen:
    sys.exit("%s: the command is not in the output as recorded" % sys.argv[2])
PY
}

"$NS" audit "$run" --json >"$T/audit.json" 2>"$T/err"
expect_rc "audit --json" 0 $?
check "audit --json: JSON, no raw controls, the call as recorded" inert "$T/audit.json" "audit --json"
expect_grep "audit --json: U+009B as an escape" '\\u009b\[31m' "$T/audit.json"
expect_grep "audit --json: U+202E as an escape" '\\u202e' "$T/audit.json"

"$NS" policy "$T/deny.yaml" --run "$run" --json >"$T/policy.json" 2>"$T/err"
expect_rc "policy --run --json" 0 $?
check "policy --run --json: JSON, no raw controls, the call as recorded" inert "$T/policy.json" "policy --run --json"
expect_grep "policy --run --json: U+202E as an escape" '\\u202e' "$T/policy.json"

done_tests
