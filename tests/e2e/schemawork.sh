#!/usr/bin/env bash
# schemawork: checking a hostile value against a schema takes bounded work (docs/security.md,
# "Hostile bytes"). A schema with two recursive anyOf branches (an expression tree, as a manifest
# author may write one, or as a hostile MCP server declares its outputSchema) and a value some 30
# levels deep that fails both branches only at its bottom made the validator apply 2^30 schemas and more:
# the runner spun at full CPU forever, past the job's timeout and SIGTERM, on 1.5 KB of JSON.
# Now the validation stops past its budget and the value is refused, saying why, within seconds.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
HS=$ROOT/tests/hostileserver.py
mkdir -p "$T/ws" "$T/runs"
SCHEMA=$(python3 -c '
import json
node = {"anyOf": [{"type": "object", "properties": {"op": {"const": op}, "args": {"type": "array",
        "items": {"$ref": "#/$defs/node"}}}, "required": ["op", "args"]} for op in ("add", "neg")] + [{"type": "number"}]}
print(json.dumps({"type": "object", "properties": {"e": {"$ref": "#/$defs/node"}}, "required": ["e"],
                  "$defs": {"node": node}}, separators=(",", ":")))')
python3 -c '
import json, sys
v = "x"
for _ in range(28):  # a script is YAML, at most 64 deep; a model API reply may be 128 deep
    v = {"op": "mul", "args": [v]}
print(json.dumps([{"tool_calls": [{"name": "final_result", "arguments": {"e": v}}]},
                  {"tool_calls": [{"name": "final_result", "arguments": {"e": 1}}]}]))' > "$T/replies.json"

# run NAME MANIFEST: the runner under a 60 s bound (the fix takes a few seconds; before, forever)
run() {
	timeout -s KILL 60 "$NS" run "$2" --out "$T/runs" >"$T/$1.out" 2>"$T/$1.err"
	local rc=$?
	[ "$rc" = 137 ] && echo "FAIL $1: the runner was still validating after 60 s" && tail -3 "$T/$1.err"
	return $rc
}
events() { zstd -dcq "$(cat "$T/$1.out")/jobs/j/events.jsonl.zst"; }

# 1. the worker's own output schema; the model's final_result is the deep value, then a good one
cat > "$T/own.yaml" <<YAML
version: 1
workspace: ws
models:
  m: { provider: scripted, script: replies.json }
workers:
  w: { model: m, instructions: x, output: $SCHEMA }
jobs:
  j: { worker: w }
YAML
run own "$T/own.yaml"
expect_rc "own schema: the run ends, the job succeeds with the model's second answer" 0 $?
events own > "$T/own.ev" 2>/dev/null
expect_grep "own schema: the deep value is refused, saying why" '"type":"output_rejected".*takes more than [0-9]+ steps' "$T/own.ev"
expect_grep "own schema: the good value is the output" '"type":"output".*"e":1' "$T/own.ev"

# 2. a stdio MCP server declaring that outputSchema and answering with the deep value
cat > "$T/mcp.yaml" <<YAML
version: 1
workspace: ws
sandbox: { backend: none }
mcp:
  s: { command: [python3, "$HS", stdio, schemawork], timeout: 60s }
models:
  m:
    provider: scripted
    replies:
      - { tool_calls: [ { name: mcp__s__t, arguments: {} } ] }
      - { tool_calls: [ { name: final_result, arguments: {} } ] }
workers:
  w: { model: m, instructions: x, tools: ["mcp__s__*"], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
run mcp "$T/mcp.yaml"
expect_rc "MCP outputSchema: the run ends (the call failed, the job went on)" 0 $?
events mcp > "$T/mcp.ev" 2>/dev/null
expect_grep "MCP outputSchema: the tool result says why" '"type":"tool_result".*takes more than [0-9]+ steps' "$T/mcp.ev"

# 3. a pattern in a server's outputSchema is compiled in the runner when the list comes: one of
# 36 bytes, ((((a{1,60}){1,60}){1,60}){1,60}, made regcomp take 5 GiB and 16 s (and grow on
# until the machine ran out); now refused before regcomp, the tool kept with its result unchecked
sed 's/stdio, schemawork/stdio, regexbomb/' "$T/mcp.yaml" > "$T/bomb.yaml"
asan || ulimit -v 4000000 # a bound the fixed runner never nears; before, its 5 GiB were refused here
timeout -s KILL 60 python3 "$ROOT/tests/peakrss.py" "$T/bomb.rss" "$NS" run "$T/bomb.yaml" --out "$T/runs" \
	>"$T/bomb.out" 2>"$T/bomb.err"
expect_rc "regexbomb: the run ends" 0 $?
check "regexbomb: peak memory $(cat "$T/bomb.rss" 2>/dev/null) KiB, under 256 MiB" \
	bash -c "[ -s '$T/bomb.rss' ] && [ \$(cat '$T/bomb.rss') -lt 262144 ]"
events bomb > "$T/bomb.ev" 2>/dev/null
expect_grep "regexbomb: the call's result says its schema was not checked" '"output_schema":"not checked' "$T/bomb.ev"
done_tests
