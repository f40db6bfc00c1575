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

done_tests
