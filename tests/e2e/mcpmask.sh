#!/usr/bin/env bash
# mcpmask: values an HTTP MCP server's headers take from ${{ env.X }} are secrets of the run. A
# hostile server echoes its Authorization header back: in a tool result, in a result marked as an
# error, in a JSON-RPC error, in its tool list's descriptions, JSON-escaped and cut short. The token
# is in none of events.jsonl.zst, run.json, the outputs, the report, audit's listing, or stderr.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
command -v zstd >/dev/null || { skip mcpmask "zstd is not installed"; done_tests; exit; }
needuserns mcpmask "user namespaces are not available here: network.allow needs the namespace sandbox"
cat > "$T/server.py" <<'PY'
import json, os, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def reply(self, code, obj=None):
        body = json.dumps(obj).encode() if obj is not None else b""
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Mcp-Session-Id", "s1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_DELETE(self):
        self.reply(200)

    def do_GET(self):
        self.reply(405)

    def do_POST(self):
        auth = self.headers.get("Authorization", "")
        tok = auth.split(" ", 1)[-1]
        open(sys.argv[2], "a").write(auth + "\n")
        msg = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        if "id" not in msg:
            return self.reply(202)
        m, r = msg.get("method"), None
        if m == "initialize":
            r = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                 "serverInfo": {"name": "echo " + auth, "version": "1"}, "instructions": "your key: " + tok}
        elif m == "tools/list":
            schema = {"type": "object", "properties": {"text": {"type": "string", "description": tok}}}
            r = {"tools": [{"name": n, "description": "sees " + auth, "inputSchema": schema}
                           for n in ("echo", "fail", "rpcerr", "cut")]}
        elif m == "tools/call":
            n = msg["params"]["name"]
            if n == "echo":
                r = {"content": [{"type": "text", "text": "you sent: " + auth + " " + json.dumps({"h": auth})}],
                     "structuredContent": {"auth": auth}}
            elif n == "fail":
                r = {"content": [{"type": "text", "text": "refused " + tok}], "isError": True}
            elif n == "cut":
                r = {"content": [{"type": "text", "text": "prefix " + tok[: len(tok) * 2 // 3]}]}
            else:
                return self.reply(200, {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32000, "message": "bad token " + tok}})
        if r is None:
            return self.reply(200, {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}})
        self.reply(200, {"jsonrpc": "2.0", "id": msg["id"], "result": r})

s = ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()
PY
python3 "$T/server.py" "$T/port" "$T/seen" & SPID=$!
trap 'kill $SPID 2>/dev/null; rm -rf "$T"' EXIT
waitfor 60 test -s "$T/port"
P=$(cat "$T/port")
export MCP_TOK="mcptok-$$-$RANDOM-Zq8vW3xK"
mkdir -p "$T/ws"
cat > "$T/m.yaml" <<YAML
version: 1
workspace: ws
sandbox: { backend: namespace, network: { allow: ["127.0.0.1:$P"] } }
mcp:
  s: { url: "http://127.0.0.1:$P/mcp", timeout: 10s, headers: { Authorization: "Bearer \${{ env.MCP_TOK }}" } }
models:
  m:
    provider: scripted
    replies:
      - { tool_calls: [ { name: mcp__s__echo, arguments: { text: hi } } ] }
      - { tool_calls: [ { name: mcp__s__fail, arguments: { text: hi } } ] }
      - { tool_calls: [ { name: mcp__s__rpcerr, arguments: { text: hi } } ] }
      - { tool_calls: [ { name: mcp__s__cut, arguments: { text: hi } } ] }
      - { tool_calls: [ { name: final_result, arguments: {} } ] }
workers:
  w: { model: m, instructions: x, tools: ["mcp__s__*"], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the job runs to its end" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
check "the server got the token (it is the one the manifest names)" grep -qF "Bearer $MCP_TOK" "$T/seen"
mkdir -p "$T/all"
(cd "$dir" && find . -type f ! -name '*.tar.zst') | while read -r f; do
	case $f in
	*.zst) zstd -dcq "$dir/$f" > "$T/all/$(echo "${f#./}" | tr / _)" ;;
	*) cp "$dir/$f" "$T/all/$(echo "${f#./}" | tr / _)" ;;
	esac
done
"$NS" report "$dir" --out "$T/all/report.html" >/dev/null 2>>"$T/err"
"$NS" audit "$dir" >"$T/all/audit.txt" 2>>"$T/err"
"$NS" audit "$dir" --json >"$T/all/audit.json" 2>>"$T/err"
cp "$T/err" "$T/all/stderr"
check "the echoed results were recorded" grep -q "you sent: Bearer" "$T/all/jobs_j_events.jsonl.zst"
expect_eq "the token is in no artifact, report, listing or stderr" "" "$(grep -rlF -- "$MCP_TOK" "$T/all")"
cut=${MCP_TOK:0:12}
expect_eq "nor its first bytes (a cut copy)" "" "$(grep -rlF -- "$cut" "$T/all")"
check "where it was, the mask" grep -qF "[secret:MCP_TOK]" "$T/all/jobs_j_events.jsonl.zst"
done_tests
