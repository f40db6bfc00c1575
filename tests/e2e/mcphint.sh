#!/usr/bin/env bash
# mcphint: an MCP tool writes unless its server marks it readOnlyHint (tool annotations). Two
# jobs on one workspace whose only tools are a server's: with every tool marked, -j 2 runs them
# at once (each one's meet() sees the other's); with the marks gone, they run one after the
# other and the second says it waits for the first.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
command -v zstd >/dev/null || { skip mcphint "zstd is not installed"; done_tests; exit; }
mkdir -p "$T/ws" "$T/meet"

manifest() { # $1: the server's hint (readonly or none)
	cat <<YAML
version: 1
workspace: ws
sandbox: { backend: none }
mcp:
  s: { command: [python3, "$ROOT/tests/mcpstdio.py"], env: [MCP_HINT, MCP_MEET, MCP_MEET_WAIT] }
models:
  ma: { provider: scripted, replies: [ {tool_calls: [ {name: mcp__s__meet, arguments: {me: a, other: b}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
  mb: { provider: scripted, replies: [ {tool_calls: [ {name: mcp__s__meet, arguments: {me: b, other: a}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  wa: { model: ma, instructions: x, tools: ["mcp__s__*"], approval: { default: allow } }
  wb: { model: mb, instructions: x, tools: ["mcp__s__*"], approval: { default: allow } }
jobs:
  a: { worker: wa }
  b: { worker: wb, workspace: ws }
YAML
}
result() { # the text of job $2's meet call in run $1
	zstd -dcq "$1/jobs/$2/events.jsonl.zst" | python3 -c '
import json, re, sys
for l in sys.stdin:
    e = json.loads(l)
    if e["type"] == "tool_result" and e.get("tool") == "mcp__s__meet":
        m = re.search(r"\b(met|alone)\b", json.dumps(e)); print(m.group(1) if m else json.dumps(e)); break
else: print("(none)")'
}

export MCP_MEET="$T/meet" MCP_HINT=readonly
manifest > "$T/ro.yaml"
dir=$("$NS" run "$T/ro.yaml" -j 2 --out "$T/runs" 2>"$T/err.ro"); rc=$?
expect_rc "two jobs of read-only MCP tools succeed" 0 "$rc"
expect_grep "the hint makes a job read-only, and it says so" "its MCP tools only read \(readOnlyHint\)" "$T/err.ro"
expect_eq "job a met b: they ran at once" met "$(result "$dir" a)"
expect_eq "job b met a" met "$(result "$dir" b)"
check "the tool list's record names the read-only tools" bash -c "zstd -dcq '$dir/jobs/a/events.jsonl.zst' | grep -q '\"read_only\":\[\"mcp__s__meet\"'"
check "the run verifies" "$NS" audit "$dir" --verify

rm -f "$T/meet"/*
export MCP_HINT=none MCP_MEET_WAIT=3 # the first job meets nobody: it waits that long
manifest > "$T/rw.yaml"
dir=$("$NS" run "$T/rw.yaml" -j 2 --out "$T/runs" 2>"$T/err.rw"); rc=$?
expect_rc "two jobs of unmarked MCP tools succeed" 0 "$rc"
expect_grep "an unmarked tool makes its job a writer" "its MCP tools may write" "$T/err.rw"
expect_grep "the second waits for the first" "waiting: job [ab] may change its workspace" "$T/err.rw"
first=$(grep -o "job [ab]: started" "$T/err.rw" | head -1 | cut -c5)
other=$([ "$first" = a ] && echo b || echo a)
expect_eq "the first ran alone: its meet found nobody" alone "$(result "$dir" "$first")"
expect_eq "the second found the first's mark, left when it ran" met "$(result "$dir" "$other")"
check "the second started after the first ended" awk -v f="job $first: succeeded" -v s="job $other: started" \
	'index($0, f) { e = NR } index($0, s) { t = NR } END { exit !(e && t > e) }' "$T/err.rw"
done_tests
