#!/usr/bin/env bash
# auditmcp: what audit and the rules say of MCP and file tools. The audit table shows an MCP
# tool's name whole, or cut in the middle keeping its server and the end of its tool name; a call
# a rule names with args that do not match is explained as such, not as "matches none of the
# rules"; a file tool's path that cannot be judged is not described in command-pattern words.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
command -v zstd >/dev/null || { skip auditmcp "zstd is not installed"; done_tests; exit; }
mkdir -p "$T/ws"
cat > "$T/m.yaml" <<YAML
version: 1
workspace: ws
sandbox: { backend: none }
mcp:
  s: { command: [python3, "$ROOT/tests/mcpstdio.py"] }
models:
  m:
    provider: scripted
    replies:
      - tool_calls:
          - { name: mcp__s__look, arguments: { me: a } }
          - { name: mcp__s__list_directory_with_sizes_in_detail, arguments: { me: a } }
          - { name: mcp__s__look, arguments: { me: b } }
          - { name: read_file, arguments: { path: /etc/passwd } }
      - tool_calls: [ { name: final_result, arguments: {} } ]
workers:
  w:
    model: m
    instructions: x
    tools: [read_file, "mcp__s__*"]
    approval:
      rules:
        - { tool: "mcp__s__look", args: { me: "a*" }, decision: allow }
        - { tool: "mcp__s__list_*", decision: allow }
jobs:
  j: { worker: w }
YAML
dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the run ends" 0 "$rc"
"$NS" audit "$dir" >"$T/audit" 2>&1
expect_grep "a short MCP name is shown whole" " mcp__s__look +" "$T/audit"
expect_grep "a long one keeps its server and the end of its tool name" " mcp__s__\.\.[a-z_]*_in_detail +" "$T/audit"
expect_nogrep "no MCP name is cut to its first letters" "mcp__s\.\.\. |mcp__\.\.\." "$T/audit"
expect_grep "the args mismatch says so, in the audit" "rule 1 \(line [0-9]+\) names mcp__s__look but its args do not match: me \"b\" is not a\*" "$T/audit"
"$NS" policy "$T/m.yaml" --worker w --tool mcp__s__look --args '{"other":"x"}' >/dev/null 2>"$T/pol"
expect_grep "a missing argument is named" "names mcp__s__look but its args do not match: me is missing; default deny" "$T/pol"
expect_nogrep "not as matching none of the rules" "matches none of the rules" "$T/pol"
"$NS" policy "$T/m.yaml" --worker w --tool read_file --path /etc/passwd >/dev/null 2>"$T/pol"
expect_grep "a file path outside the workspace: path words" "cannot be judged .*no rule with a path pattern allows it; default deny" "$T/pol"
expect_nogrep "no command-pattern words for a file tool" "command|run time" "$T/pol"
expect_grep "and the run's record says the same to the model" "no rule with a path pattern" <(zstd -dcq "$dir/jobs/j/events.jsonl.zst")
done_tests
