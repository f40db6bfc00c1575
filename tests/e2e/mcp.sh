#!/usr/bin/env bash
# mcp: real MCP servers nobody here wrote, from the npm registry (the reference filesystem and
# "everything" servers), run inside the namespace sandbox under the approval rules; replay
# answers their calls from the record with node gone. Every call the server received is on a
# wire log (the server's stdin through tee), so "never reached the server" is checked where
# it counts.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../mcpnpm.sh"
export ASAN_OPTIONS=detect_leaks=0

needuserns mcp
mcp_npm mcp || { done_tests; exit; }
FS=/mcp/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
EV=/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js

mkdir -p "$T/proj/ws/reports" "$T/wire" "$T/nodebin" "$T/outside"
printf 'one\ntwo\n' > "$T/proj/ws/notes.txt"
{ echo "FIRST LINE of the log"; seq 1 20000; echo "error: THE LAST LINE says what failed"; } > "$T/proj/ws/big.log"
echo "host secret outside the mounts" > "$T/outside/secret.txt"
ln -s "$(command -v node)" "$T/nodebin/node"
export MCP_TEST_TOKEN=tok-passed-by-name MCP_TEST_HIDDEN=tok-not-listed

events() { zstd -dc "$1/jobs/$2/events.jsonl.zst"; }
# jq-free: the field of the tool_result (or decision) event of a step
ev() { events "$1" "$2" | python3 -c '
import json,sys
step,typ,field=int(sys.argv[1]),sys.argv[2],sys.argv[3]
for l in sys.stdin:
    e=json.loads(l)
    if e["type"]==typ and (e.get("step")==step or step==0):
        v=e.get(field); print(v if isinstance(v,str) else json.dumps(v)); break
else: print("(none)")' "$3" "$4" "$5"; }

cat > "$T/proj/m.yaml" <<YAML
version: 1
workspace: ws
models:
  default:
    provider: scripted
    replies:
      - tool_calls:
          - { name: mcp__fs__read_text_file, arguments: { path: /workspace/notes.txt } }
          - { name: mcp__fs__write_file, arguments: { path: /workspace/reports/r.md, content: "written by the fs server\n" } }
          - { name: mcp__fs__write_file, arguments: { path: /workspace/notes.txt, content: "DENIED-WRITE\n" } }
          - { name: mcp__fs__write_file, arguments: { path: "/workspace/reports/../notes.txt", content: "DOTDOT-WRITE\n" } }
          - { name: mcp__root__read_text_file, arguments: { path: "$T/outside/secret.txt" } }
          - { name: mcp__root__write_file, arguments: { path: /usr/nightshift-mcp-probe, content: x } }
          - { name: mcp__root__read_text_file, arguments: { path: /workspace/notes.txt } }
          - { name: mcp__ev__echo, arguments: { message: hello from nightshift } }
          - { name: mcp__ev__get-sum, arguments: { a: 2, b: 40 } }
          - { name: mcp__ev__get-tiny-image, arguments: {} }
          - { name: mcp__ev__get-structured-content, arguments: { location: Chicago } }
          - { name: mcp__ev__get-resource-reference, arguments: { resourceType: Text, resourceId: 2 } }
          - { name: mcp__ev__get-env, arguments: {} }
          - { name: mcp__ev__trigger-long-running-operation, arguments: { duration: 1, steps: 3 } }
          - { name: mcp__ev__trigger-long-running-operation, arguments: { duration: 30, steps: 3 } }
          - { name: mcp__ev__echo, arguments: { message: still alive after the timeout } }
          - { name: mcp__ev__toggle-simulated-logging, arguments: {} }
          - { name: mcp__fs__read_text_file, arguments: { path: /workspace/big.log } }
      - tool_calls:
          - { name: final_result, arguments: { ok: true } }
  mover:
    provider: scripted
    replies:
      - tool_calls:
          - { name: mcp__fs__move_file, arguments: { source: /workspace/notes.txt, destination: /workspace/gone.txt } }
      - tool_calls:
          - { name: final_result, arguments: { ok: true } }
sandbox:
  backend: namespace
  network: none
  env: [MCP_TEST_TOKEN]
  mounts:
    - { source: $NPMDIR, target: /mcp, mode: ro }
    - { source: $T/nodebin, target: /nodebin, mode: ro }
    - { source: $T/wire, target: /wire, mode: rw }
mcp:
  fs: { command: [sh, -c, "tee -a /wire/fs.log | exec /nodebin/node $FS /workspace"] }
  root: { command: [/nodebin/node, $FS, /] }
  ev: { command: [/nodebin/node, $EV, stdio], timeout: 6s }
workers:
  w:
    instructions: Exercise the servers.
    tools: ["mcp__fs__read_text_file", "mcp__fs__write_file", "mcp__fs__move_file", "mcp__root__*", "mcp__ev__*"]
    tool_output_limit: 4k
    approval:
      rules:
        - { tool: "mcp__*__read_*", decision: allow }
        - { tool: "mcp__fs__write_file", args: { path: "/workspace/reports/**" }, decision: allow }
        - { tool: "mcp__root__write_file", decision: allow }
        - { tool: "mcp__ev__*", decision: allow }
        - { tool: "mcp__fs__move_file", decision: abort }
  mover:
    instructions: Move the notes.
    model: mover
    tools: ["mcp__fs__move_file"]
    approval:
      rules:
        - { tool: "mcp__fs__move_file", decision: abort }
jobs:
  j: { worker: w, input: "go" }
  k: { worker: mover, input: "go", needs: [j] }
YAML
run=$("$NS" run "$T/proj/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the move_file call aborts the job (exit 3)" 3 "$rc"
[ -d "$run" ] || { cat "$T/err"; done_tests; exit; }
events "$run" j > "$T/ev.jsonl"

# tools listed: what the globs take, and only that
python3 - "$T/ev.jsonl" > "$T/offered" <<'PY'
import json,sys
for l in open(sys.argv[1]):
    e=json.loads(l)
    if e["type"]=="mcp_tools":
        print(e["server"], e.get("protocol_version"), " ".join(t["name"] for t in e.get("offered",[])), "|", " ".join(e.get("not_offered",[])))
PY
expect_grep "fs: protocol revision negotiated" "^fs 2025-(11-25|06-18|03-26) " "$T/offered"
expect_grep "fs: the three tools the worker names are offered" "^fs .*mcp__fs__read_text_file mcp__fs__write_file.*mcp__fs__move_file" "$T/offered"
expect_grep "fs: the others are listed but not offered" "^fs .*\|.*mcp__fs__list_directory" "$T/offered"
expect_nogrep "fs: list_directory is not offered" "^fs [^|]*mcp__fs__list_directory " "$T/offered"
expect_grep "everything: echo and get-sum offered" "^ev .*mcp__ev__echo .*mcp__ev__get-sum" "$T/offered"
first=$(events "$run" j | python3 -c 'import json,sys
for l in sys.stdin:
    e=json.loads(l)
    if e["type"]=="model_request": print(" ".join(t["name"] for t in e["tools"])); break')
case "$first" in *mcp__fs__read_text_file*mcp__ev__echo*final_result) r=0 ;; *) r=1 ;; esac
expect_rc "the model is offered the MCP tools (before final_result)" 0 "$r"

# allowed calls ran, inside the sandbox, on the workspace
expect_eq "read_text_file read the workspace" "one
two" "$(ev "$run" j 1 tool_result output)"
expect_eq "write_file into reports/ is allowed and done" "written by the fs server" "$(cat "$T/proj/ws/reports/r.md")"
expect_grep "a snapshot was taken before the fs write" '"type":"snapshot".*"step":2' "$T/ev.jsonl"
# denied calls never reach the server
expect_eq "write outside reports/ denied" "deny" "$(ev "$run" j 3 decision decision)"
expect_eq "reports/../notes.txt is notes.txt: denied" "deny" "$(ev "$run" j 4 decision decision)"
expect_eq "notes.txt unchanged" "one
two" "$(cat "$T/proj/ws/notes.txt")"
expect_grep "the wire log holds the allowed write" "written by the fs server" "$T/wire/fs.log"
expect_nogrep "the denied write never reached the server" "DENIED-WRITE|DOTDOT-WRITE" "$T/wire/fs.log"
expect_nogrep "the aborted move never reached the server" "move_file" "$T/wire/fs.log"
expect_eq "no tool_result for a denied call" "(none)" "$(ev "$run" j 3 tool_result output)"
expect_eq "move_file: abort decided by the rule" "abort" "$(ev "$run" k 0 decision decision)"
check "job k ended aborted" sh -c "zstd -dc '$run/jobs/k/events.jsonl.zst' | grep -q '\"type\":\"job_end\".*\"status\":\"aborted\"'"
check "notes.txt was not moved" test -f "$T/proj/ws/notes.txt"

# the sandbox holds: a filesystem server allowed "/" still sees only the sandbox's view
expect_grep "root: a host file outside the mounts is not there" "ENOENT|no such file" "$T/ev.jsonl"
case "$(ev "$run" j 5 tool_result output)" in *"host secret"*) r=1 ;; *) r=0 ;; esac
expect_rc "root: the host secret was not read" 0 "$r"
expect_eq "root: reading past the mounts is a tool error" "1" "$(ev "$run" j 5 tool_result exit_code)"
expect_eq "root: writing into /usr fails (read-only)" "1" "$(ev "$run" j 6 tool_result exit_code)"
check "root: nothing was written into the host's /usr" test ! -e /usr/nightshift-mcp-probe
expect_eq "root: the control read of /workspace works" "one
two" "$(ev "$run" j 7 tool_result output)"

# the everything server: text, numbers, images noted, structured content validated, resources
expect_grep "echo" "Echo: hello from nightshift" <(ev "$run" j 8 tool_result output)
expect_grep "get-sum" "42" <(ev "$run" j 9 tool_result output)
expect_grep "an image is noted, not sent" "image content \(image/png, [0-9]+ bytes of base64\) not shown" <(ev "$run" j 10 tool_result output)
expect_eq "structuredContent valid against the outputSchema" "valid" "$(ev "$run" j 11 tool_result output_schema)"
expect_grep "an embedded resource's text reaches the model" "\[resource [a-z]+://" <(ev "$run" j 12 tool_result output)
envout=$(ev "$run" j 13 tool_result output)
case "$envout" in *tok-passed-by-name*) r=0 ;; *) r=1 ;; esac
expect_rc "get-env: a variable of sandbox.env reaches the server" 0 "$r"
case "$envout" in *tok-not-listed*) r=1 ;; *) r=0 ;; esac
expect_rc "get-env: an unlisted variable does not" 0 "$r"
expect_eq "a short long-running operation succeeds" "0" "$(ev "$run" j 14 tool_result exit_code)"
check "its progress notifications were counted" test "$(ev "$run" j 14 tool_result progress_notifications)" -ge 1
expect_eq "a call past the server's timeout is a tool error" "true" "$(ev "$run" j 15 tool_result timed_out)"
expect_grep "the server still answers after the cancelled call" "still alive after the timeout" <(ev "$run" j 16 tool_result output)
expect_grep "the server's stderr is in the events" '"type":"mcp_log".*"server":"fs".*Secure MCP Filesystem Server' "$T/ev.jsonl"

# a long MCP result reaches the model cut to tool_output_limit (4k), head and tail, the cut said;
# the event keeps the whole result, its size and digest
python3 - "$T/ev.jsonl" "$T/proj/ws/big.log" > "$T/cut" <<'PY'
import hashlib, json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
big = open(sys.argv[2]).read()
res = [e for e in ev if e["type"] == "tool_result" and e.get("step") == 18][0]
print("event-full", res["output"] == big, res["output_bytes"] == len(big.encode()),
      res["output_sha256"] == hashlib.sha256(big.encode()).hexdigest(), res.get("shown_bytes", 0) <= 4096 + 200)
sent = [m for e in ev if e["type"] == "model_request" for m in e.get("messages", [])
        if m.get("role") == "tool" and m.get("tool_call_id") == res["call_id"]]
c = sent[0]["content"] if sent else ""
print("sent-bytes", len(c.encode()) <= 4096 + 200)
print("sent-head", c.startswith("FIRST LINE of the log\n"))
print("sent-tail", c.rstrip("\n").endswith("error: THE LAST LINE says what failed"))
print("sent-cut", "bytes (" in c and "lines) cut here, of %d;" % len(big.encode()) in c)
PY
expect_eq "MCP result: the event keeps the whole output, its size and digest" "event-full True True True True" "$(grep event-full "$T/cut")"
expect_eq "MCP result: the model got at most tool_output_limit" "sent-bytes True" "$(grep sent-bytes "$T/cut")"
expect_eq "MCP result: its head was kept" "sent-head True" "$(grep sent-head "$T/cut")"
expect_eq "MCP result: its tail (the error) was kept" "sent-tail True" "$(grep sent-tail "$T/cut")"
expect_eq "MCP result: the cut is said, with the whole size" "sent-cut True" "$(grep sent-cut "$T/cut")"
check "the run verifies" "$NS" audit "$run" --verify
"$NS" audit "$run" > "$T/audit" 2>&1
expect_grep "audit lists MCP calls with their decisions" "mcp__fs__write_file deny: 2" "$T/audit"

# nightshift policy decides an MCP call with its arguments as the run did
expect_eq "policy --args: a write into reports/ is allowed by rule 2" "allow by rule 2" \
	"$("$NS" policy "$T/proj/m.yaml" --worker w --tool mcp__fs__write_file --args '{"path":"/workspace/reports/a.md"}' 2>/dev/null)"
expect_eq "policy --args: reports/../notes.txt is denied" "deny by default" \
	"$("$NS" policy "$T/proj/m.yaml" --worker w --tool mcp__fs__write_file --args '{"path":"/workspace/reports/../notes.txt"}' 2>/dev/null)"
"$NS" policy "$T/proj/m.yaml" --worker w --tool mcp__fs__write_file --args '[1]' >/dev/null 2>&1
expect_rc "policy --args that is not an object: exit 2" 2 "$?"

# replay: node gone, the servers are never started, the calls answered from the record
rm "$T/nodebin/node"
: > "$T/wire/fs.log"
cp "$T/proj/ws/notes.txt" "$T/notes.before"
new=$("$NS" replay "$run" --out "$T/replays" 2>"$T/rerr"); rc=$?
expect_rc "replay with node gone: nothing diverged (exit 0)" 0 "$rc"
expect_grep "replay matches the record" "replay matches the record" "$T/rerr"
[ "$rc" = 0 ] || cat "$T/rerr"
check "no server started in the replay (empty wire log)" test ! -s "$T/wire/fs.log"
expect_grep "the replayed results say so" '"replayed":true' <(events "$new" j)
check "identical output.json" cmp "$run/jobs/j/output.json" "$new/jobs/j/output.json"

# a server that dies: a start failure fails its job with the server's own words; a crash in a
# call is a tool error, never a hang
cat > "$T/proj/crash.py" <<'PY'
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("method") == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "crash", "version": "0"}}}), flush=True)
    elif m.get("method") == "tools/list":
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"tools": [{"name": "boom", "inputSchema": {"type": "object"}}]}}), flush=True)
    elif m.get("method") == "tools/call":
        sys.stderr.write("crash: going down mid-call\n"); sys.stderr.flush()
        sys.exit(7)
PY
cat > "$T/proj/c.yaml" <<YAML
version: 1
workspace: ws
models:
  default:
    provider: scripted
    replies:
      - tool_calls: [{ name: mcp__crash__boom, arguments: {} }]
      - tool_calls: [{ name: mcp__crash__boom, arguments: {} }]
      - tool_calls: [{ name: final_result, arguments: {} }]
sandbox: { backend: namespace }
mcp:
  crash: { command: [python3, /workspace/../workspace/crash.py], timeout: 120s }
  nope: { command: [sh, -c, "echo nope: cannot start >&2; exit 3"] }
workers:
  w: { instructions: x, tools: ["mcp__crash__*"], approval: { default: allow } }
  v: { instructions: x, tools: ["mcp__nope__*"], approval: { default: allow } }
jobs:
  c: { worker: w, input: go }
  n: { worker: v, input: go }
YAML
cp "$T/proj/crash.py" "$T/proj/ws/crash.py"
start=$(date +%s)
crun=$("$NS" run "$T/proj/c.yaml" --out "$T/runs" 2>"$T/cerr"); rc=$?
took=$(( $(date +%s) - start ))
expect_rc "one job failed to start its server: exit 1" 1 "$rc"
check "no hang: both jobs ended long before the call's 120 s timeout (took $took s)" test "$took" -lt 60
expect_grep "the crash is a tool error naming the exit" "the server exited" <(ev "$crun" c 1 tool_result output)
expect_grep "the next call says the server is gone" "not running" <(ev "$crun" c 2 tool_result output)
expect_grep "job c still succeeded" '"type":"job_end".*"status":"succeeded"' <(events "$crun" c)
expect_grep "job n failed with the server's stderr" "nope: cannot start" "$T/cerr"
done_tests
