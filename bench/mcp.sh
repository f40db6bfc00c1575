#!/usr/bin/env bash
# mcp: what nightshift adds to an MCP tool call beside the server's own time. The peer is a
# bare JSON-RPC client (python, no sandbox, no policy, no record) calling the same tool of the
# same server (@modelcontextprotocol/server-everything, echo) over stdio. nightshift runs the
# server in the namespace sandbox and, per call: decides it by the rules, snapshots the
# workspace (the server may change it), calls, records decision and result in the hash-chained
# log. Per call: server_ms (request written to answer read, as nightshift sees it) and the
# step's wall time from its decision event to its tool_result event.
. "$(dirname "$0")/lib.sh" # goal
set -u
: "${NIGHTSHIFT:?set NIGHTSHIFT}"
here=$(cd "$(dirname "$0")" && pwd)
N=${MCP_BENCH_CALLS:-100}
source "$here/../tests/mcpnpm.sh"
mcp_npm bench-mcp || exit 0
T=$(mktemp -d /tmp/ns-bench-mcp.XXXXXX)
trap 'rm -rf "$T"' EXIT
EV=$NPMDIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js

echo "peer: a bare stdio client, $N echo calls (no sandbox, no policy, no record)"
python3 - "$EV" "$N" <<'PY'
import json, subprocess, sys, time, statistics
p = subprocess.Popen(["node", sys.argv[1], "stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
def rpc(i, method, params):
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n"); p.stdin.flush()
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("id") == i: return m
rpc(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}})
p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"); p.stdin.flush()
ts = []
for i in range(int(sys.argv[2])):
    t = time.perf_counter(); rpc(10 + i, "tools/call", {"name": "echo", "arguments": {"message": "bench %d" % i}}); ts.append((time.perf_counter() - t) * 1000)
p.kill()
print("  per call: median %.2f ms, p90 %.2f ms" % (statistics.median(ts), sorted(ts)[int(len(ts) * .9)]))
PY

mkdir -p "$T/ws"
echo "a file" > "$T/ws/notes.txt"
{
	echo "version: 1"
	echo "workspace: ws"
	echo "models:"
	echo "  default:"
	echo "    provider: scripted"
	echo "    replies:"
	echo "      - tool_calls:"
	for i in $(seq "$N"); do echo "          - { name: mcp__ev__echo, arguments: { message: bench $i } }"; done
	echo "      - tool_calls: [{ name: final_result, arguments: {} }]"
	echo "sandbox:"
	echo "  backend: namespace"
	echo "  mounts: [{ source: $NPMDIR, target: /mcp, mode: ro }]"
	echo "mcp:"
	echo "  ev: { command: [node, /mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js, stdio] }"
	echo "workers:"
	echo "  w: { instructions: bench, tools: ['mcp__ev__echo'], approval: { rules: [ { tool: mcp__ev__echo, args: { message: 'bench *' }, decision: allow } ] } }"
	echo "jobs:"
	echo "  j: { worker: w, input: go }"
} > "$T/m.yaml"
start=$(date +%s%N)
run=$("$NIGHTSHIFT" run "$T/m.yaml" --out "$T/runs" 2>"$T/err") || { cat "$T/err"; exit 1; }
total=$(( ($(date +%s%N) - start) / 1000000 ))
echo "nightshift: the same $N calls, server in the namespace sandbox, each decided, snapshotted and recorded"
zstd -dc "$run/jobs/j/events.jsonl.zst" | python3 -c '
import json, sys, statistics
from datetime import datetime
def t(e): return datetime.strptime(e["time"], "%Y-%m-%dT%H:%M:%S.%fZ").timestamp() * 1000
dec, server, wall, snap = {}, [], [], {}
start = None
for l in sys.stdin:
    e = json.loads(l)
    if e["type"] == "mcp_tools": start = e.get("start_ms")
    if e["type"] == "decision": dec[e["step"]] = t(e)
    if e["type"] == "snapshot": snap[e["step"]] = t(e)
    if e["type"] == "tool_result" and e.get("mcp_server"):
        server.append(e["server_ms"]); wall.append(t(e) - dec[e["step"]])
over = [w - s for w, s in zip(wall, server)]
q = lambda v, f: sorted(v)[int(len(v) * f)]
print("  server start (sandbox + node + initialize + tools/list): %s ms" % start)
print("  server_ms per call: median %.2f ms, p90 %.2f ms" % (statistics.median(server), q(server, .9)))
print("  step wall per call (decision to tool_result): median %.2f ms, p90 %.2f ms" % (statistics.median(wall), q(wall, .9)))
print("  added by nightshift per call (wall - server_ms: policy, snapshot, record): median %.2f ms, p90 %.2f ms" % (statistics.median(over), q(over, .9)))
open(sys.argv[1], "w").write("%.2f %s" % (statistics.median(over), start))
' "$T/figs"
read -r added start < "$T/figs"
goal "added by nightshift per MCP call (median)" "$added" ms '<=' 20
goal "server start in the sandbox" "$start" ms '<=' 3000
echo "  whole run: $total ms for $N calls"
