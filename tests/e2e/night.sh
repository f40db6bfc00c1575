#!/usr/bin/env bash
# night: what a real night tripped on (issue 33), one check or more per thing seen.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0

# --- MCP tools write unless marked read-only: two MCP-only jobs on one workspace take turns ---
mkdir -p "$T/mcpw/ws"
cat > "$T/mcpw/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  default:
    provider: scripted
    replies:
      - tool_calls:
          - { name: final_result, arguments: { ok: true } }
sandbox:
  backend: none
mcp:
  fs: { url: "http://127.0.0.1:9/mcp" }
workers:
  notes:
    description: notes
    instructions: take notes
    tools: [mcp__fs__*]
    approval: { default: allow }
jobs:
  a: { worker: notes, input: one }
  b: { worker: notes, input: two }
YAML
"$NS" run "$T/mcpw/m.yaml" -j 2 --out "$T/mcpw/runs" >/dev/null 2>"$T/err"
expect_nogrep "an MCP-only job is not read-only" "started \(worker notes, read-only\)" "$T/err"
expect_grep "the second MCP-only job waits for the first" "job [ab]: waiting: job [ab] may change its workspace" "$T/err"

# --- a resumed night whose carried job spent tokens verifies: totals include carried jobs ---
js() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); v=r
for k in sys.argv[2:]: v=v.get(k, {}) if isinstance(v, dict) else {}
print(v if v != {} else "")' "$@"; }
R=$T/resume; mkdir -p "$R/ws"
printf '%s' '[{"openai_calls": [["final_result", {"ok": true}]], "usage": [524, 31, 0]}]' > "$R/script.json"
python3 "$ROOT/tests/mockmodel.py" "$R/script.json" "$R/port" "$R/mock.log" & mp=$!
waitfor 60 test -s "$R/port"
cat > "$R/m.yaml" <<YAML
version: 1
workspace: ws
models:
  mock: { provider: openai, base_url: "http://127.0.0.1:$(cat "$R/port")/v1", model: m, retries: 0 }
  quits: { provider: scripted, replies: [ {text: "I give up"} ] }
sandbox: { backend: none }
workers:
  spender: { model: mock, instructions: x }
  quitter: { model: quits, instructions: x, max_turns: 1 }
jobs:
  spend: { worker: spender }
  quit: { worker: quitter }
YAML
night=$("$NS" run "$R/m.yaml" --out "$R/runs" 2>"$R/err")
expect_eq "the carried job spent tokens" 524 "$(js "$night/run.json" jobs spend usage input)"
res=$("$NS" run "$R/m.yaml" --resume "$night" --out "$R/runs" 2>"$R/err")
expect_eq "the resumed run's usage counts the carried job" 524 "$(js "$res/run.json" usage input)"
expect_eq "and its output tokens" 31 "$(js "$res/run.json" usage output)"
"$NS" audit --verify "$res" >"$R/verify" 2>&1; rc=$?
expect_rc "the resumed night verifies" 0 "$rc"
[ "$rc" = 0 ] || cat "$R/verify"
kill $mp 2>/dev/null; wait $mp 2>/dev/null

done_tests
