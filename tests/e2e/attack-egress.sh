#!/usr/bin/env bash
# attack-egress: a step with network.allow, as an outsider, tries to reach what the list does
# not give it through the egress proxy, or to keep its connections off the record.
# Everything runs inside a network namespace of the test's own (unshare -n): it has only lo,
# on which the test puts an ordinary public address (93.184.216.34) to stand for the runner's
# own address; nothing leaves the machine. NIGHTSHIFT_TEST_RESOLVE plays the hostile resolver.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
needuserns attack-egress
for tool in curl python3 ip unshare; do
	command -v $tool > /dev/null || { skip attack-egress "$tool is missing"; done_tests; exit; }
done
if [ "$(id -u)" = 0 ]; then NETNS=(unshare -n); else NETNS=(unshare -rn); fi
if ! "${NETNS[@]}" sh -c 'ip link set lo up && ip addr add 93.184.216.34/32 dev lo' 2> "$T/netns.err"; then
	skip attack-egress "no network namespace of our own: $(cat "$T/netns.err")"
	done_tests
	exit
fi
ws="$T/ws"
mkdir -p "$ws/a"

# The "host": an HTTP server on every address of the namespace (as a host's services often
# are), logging each request; and a listener that accepts and then holds connections silent.
cat > "$T/srv.py" <<'PY'
import socket, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
portfile, log = sys.argv[1], sys.argv[2]
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        with open(log, "a") as f:
            f.write("%s %s\n" % (self.path, self.headers.get("Host")))
        b = ("hello %s\n" % self.path).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
    def log_message(self, *a):
        pass
web = ThreadingHTTPServer(("0.0.0.0", 0), H)
hold = socket.socket()
hold.bind(("127.0.0.2", 0))
hold.listen(64)
held = []
def holding():
    while True:
        held.append(hold.accept()[0])
threading.Thread(target=holding, daemon=True).start()
with open(portfile + ".tmp", "w") as f:
    f.write("%d %d\n" % (web.server_address[1], hold.getsockname()[1]))
import os; os.rename(portfile + ".tmp", portfile)
web.serve_forever()
PY

add() { printf '#!/bin/sh\n%s\n' "$2" > "$ws/a/$1"; chmod +x "$ws/a/$1"; }
calls() {
	local first=1
	for n in "$@"; do
		[ $first = 1 ] || printf ','
		first=0
		printf '{tool_calls: [ {name: shell, arguments: {command: "/workspace/a/%s"}} ]}' "$n"
	done
}
# JOB: one line per shell result (R NAME EXIT STDOUT), per event (E NAME METHOD HOST PORT
# ADDRESS DECISION RULE) and per tool_result's counts (C NAME CONNECTIONS REFUSED UNRECORDED)
results() {
	zstd -dcq "$run/jobs/$1/events.jsonl.zst" | python3 -c '
import json, sys
name = {}
for line in sys.stdin:
    e = json.loads(line)
    if e["type"] == "decision":
        name[e["step"]] = e["arguments"].get("command", e.get("tool", "?")).rsplit("/", 1)[-1]
    elif e["type"] == "tool_result" and e.get("tool") == "shell":
        out = e.get("stdout", "").rstrip("\n").replace("\n", "\\n")
        print("R\t%s\t%s\t%s" % (name[e["step"]], e["exit_code"], out))
        print("C\t%s\t%s %s %s" % (name[e["step"]], e.get("connections", 0), e.get("connections_refused", 0),
              e.get("connections_unrecorded", 0)))
    elif e["type"] == "net_connection" and "mcp_server" not in e:
        print("E\t%s\t%s %s %s %s %s %s" % (name[e["step"]], e["method"], e["host"], e["port"], e["address"] or "-",
              e["decision"], e["rule"].replace(" ", "")))
'
}
event() { grep -P "^E\t$1\t" "$T/results" | cut -f3; }
out() { grep -P "^R\t$1\t" "$T/results" | cut -f4; }
counts() { grep -P "^C\t$1\t" "$T/results" | cut -f3; }

# ---- inside the namespace ----
cat > "$T/inner.sh" <<'SH'
ip link set lo up && ip addr add 93.184.216.34/32 dev lo || exit 99
: > "$T/hits"
python3 "$T/srv.py" "$T/ports" "$T/hits" &
spid=$!
trap 'kill $spid' EXIT
for i in $(seq 600); do [ -f "$T/ports" ] && break; sleep 0.05; done
read -r P H < "$T/ports"
S="curl -sS -m 10"
# the runner's own address, which a hostile resolver answers for an admitted name
add own "$S http://own.test:$P/own"
# an address of a range that is nobody's on the internet (documentation, RFC 5737)
add doc "$S http://doc.test:$P/doc"
# forms of a host that the list does not name: each must be refused, and be on the record
py() { add "$1" "/usr/bin/python3 -c '$2'"; }
req() { # NAME REQUEST: sent raw to the proxy; the status line is printed
	py "$1" "import socket
s = socket.create_connection((\"127.0.0.1\", 3128), 10); s.sendall(b\"$2\")
print(s.recv(4096).decode(\"latin-1\").split(\"\\r\\n\")[0])"
}
req userinfo "GET http://ok.test:$P@own.test:$P/userinfo HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n"
req mapped "CONNECT [::ffff:93.184.216.34]:$P HTTP/1.1\\r\\n\\r\\n"
req decimal "CONNECT 1572395042:$P HTTP/1.1\\r\\n\\r\\n"
req loop "CONNECT 127.0.0.1:3128 HTTP/1.1\\r\\n\\r\\n"
req percent "GET http://ok%2etest:$P/percent HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n"
req portzero "CONNECT ok.test:0$P HTTP/1.1\\r\\n\\r\\n"
req portbig "CONNECT ok.test:$((P + 65536)) HTTP/1.1\\r\\n\\r\\n"
# a stdio MCP server runs in a sandbox with the job's allowlist: what it connects to is recorded too
cat > "$ws/mcpnet.py" <<PY
import json, socket, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    r = {"protocolVersion": m.get("params", {}).get("protocolVersion"), "capabilities": {"tools": {}},
         "serverInfo": {"name": "n", "version": "1"}}
    if m["method"] == "tools/list":
        r = {"tools": [{"name": "fetch", "inputSchema": {"type": "object"}}]}
    elif m["method"] == "tools/call":
        s = socket.create_connection(("127.0.0.1", 3128), 10)
        s.sendall(b"CONNECT mcp-denied.test:443 HTTP/1.1\\r\\n\\r\\n")
        st = s.recv(4096).decode("latin-1").split("\\r\\n")[0]
        s.close()
        r = {"content": [{"type": "text", "text": st}]}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\\n")
    sys.stdout.flush()
PY
# the last step: a tunnel to an admitted host that holds it open after the step is gone
add held "$S -m 2 -p http://127.0.0.2:$H/held; exit 0"
names="own doc userinfo mapped decimal loop percent portzero portbig held"
cat > "$T/m.yaml" <<YAML
version: 1
workspace: ws
sandbox:
  timeout: 30s
  env: [ASAN_OPTIONS]
  network:
    allow: ["own.test:$P", "doc.test:$P", "ok.test:$P", "127.0.0.2:$H"]
models:
  m: { provider: scripted, replies: [ {tool_calls: [ {name: mcp__net__fetch, arguments: {}} ]}, $(calls $names), {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
mcp:
  net: { command: [python3, /workspace/mcpnet.py] }
workers:
  w: { model: m, instructions: x, tools: [shell, "mcp__net__*"], max_turns: 100, approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
mkdir -p "$T/tmp"
TMPDIR=$T/tmp NIGHTSHIFT_TEST_RESOLVE="own.test=93.184.216.34,doc.test=192.0.2.9,ok.test=127.0.0.2" \
	"$NS" run "$T/m.yaml" --out "$T/runs" > "$T/out" 2> "$T/err"
echo $? > "$T/rc"
echo "$P $H" > "$T/ph"
SH
export T NS ws
export -f add calls
"${NETNS[@]}" bash "$T/inner.sh"
read -r P H < "$T/ph"
expect_rc "the run succeeds" 0 "$(cat "$T/rc")"
run=$(cat "$T/out")
results j > "$T/results"

# the runner's own address: refused like loopback, and the host's service saw nothing
expect_eq "own address: its event" "GET own.test $P 93.184.216.34 deny special-address:this-host" "$(event own)"
check "own address: the 403 names the rule ($(out own))" grep -q "refused by rule special-address:this-host" <<< "$(out own)"
expect_nogrep "own address: the host's service saw nothing" "^/own " "$T/hits"
expect_eq "documentation range: its event" "GET doc.test $P 192.0.2.9 deny special-address:documentation" "$(event doc)"
# what held: each form refused, each on the record
expect_eq "userinfo: 400" "HTTP/1.1 400 Bad Request" "$(out userinfo)"
expect_eq "userinfo: its event" "GET - 0 - deny bad-request" "$(event userinfo | sed 's/^GET  /GET - /')"
expect_eq "IPv4-mapped own address: its event" "CONNECT ::ffff:93.184.216.34 $P - deny no-entry" "$(event mapped)"
expect_eq "decimal address: its event" "CONNECT 1572395042 $P - deny no-entry" "$(event decimal)"
expect_eq "the proxy's own port: its event" "CONNECT 127.0.0.1 3128 - deny no-entry" "$(event loop)"
expect_eq "percent-encoded host: 400" "HTTP/1.1 400 Bad Request" "$(out percent)"
expect_eq "port with a leading zero: the same port" "CONNECT ok.test $P 127.0.0.2 deny special-address:loopback" "$(event portzero)"
expect_eq "port past 65535: 400" "HTTP/1.1 400 Bad Request" "$(out portbig)"
expect_nogrep "nothing but the listed reached the host's service" "." "$T/hits"
check "MCP server: refused by the proxy" grep -q "HTTP/1.1 403 Forbidden" <<< \
	"$(zstd -dcq "$run/jobs/j/events.jsonl.zst" | python3 -c 'import json,sys
for l in sys.stdin:
    e = json.loads(l)
    if e["type"] == "tool_result" and e.get("mcp_server") == "net": print(e.get("output"))')"
expect_eq "MCP server: its connection is an event" "CONNECT mcp-denied.test 443 - deny no-entry net" \
	"$(zstd -dcq "$run/jobs/j/events.jsonl.zst" | python3 -c 'import json,sys
for l in sys.stdin:
    e = json.loads(l)
    if e["type"] == "net_connection" and e.get("mcp_server"): print(e["method"], e["host"], e["port"], e["address"] or "-", e["decision"], e["rule"], e["mcp_server"])')"
# a tunnel that outlived the job's last step is on the record, with that step
expect_eq "held tunnel: its event, with its step" "CONNECT 127.0.0.2 $H 127.0.0.2 allow 127.0.0.2:$H" "$(event held)"
expect_eq "held tunnel: counted by its step" "1 0 0" "$(counts held)"
check "the run verifies" "$NS" audit "$run" --verify
[ "$_fail" = 0 ] || { cat "$T/results"; tail -5 "$T/err"; }

# ---- a flood past the proxy's cap: every connection is on the record or counted ----
rm -rf "$ws/a"
mkdir -p "$ws/a"
add flood "/usr/bin/python3 -c '
import socket
socks = []
for i in range(80):
    s = socket.socket(socket.AF_UNIX); s.connect(\"/run/nightshift/egress.sock\"); socks.append(s)
got = {}
for s in socks:
    try:
        s.sendall(b\"CONNECT nowhere.test:443 HTTP/1.1\\r\\n\\r\\n\")
    except OSError:
        pass
    st = s.recv(64).split(b\" \")[1].decode()
    got[st] = got.get(st, 0) + 1
print(\" \".join(\"%s=%d\" % kv for kv in sorted(got.items())))'"
cat > "$T/f.yaml" <<YAML
version: 1
workspace: ws
sandbox:
  timeout: 30s
  env: [ASAN_OPTIONS]
  network: { allow: ["ok.test"] }
models:
  m: { provider: scripted, replies: [ $(calls flood), {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: m, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
# 1024 descriptors: the proxy serves 64 at once (net/egress.c egresscap), the rest get a 503
( ulimit -n 1024 && TMPDIR=$T/tmp "$NS" run "$T/f.yaml" --out "$T/runs-f" > "$T/out" 2> "$T/err-f" )
expect_rc "flood: the run succeeds" 0 $?
run=$(cat "$T/out")
results j > "$T/results"
check "flood: some were turned away busy ($(out flood))" grep -q "503=" <<< "$(out flood)"
expect_eq "flood: every connection counted" "80 80 0" "$(counts flood)"
expect_eq "flood: every connection an event" 80 "$(grep -cP "^E\tflood\t" "$T/results")"
expect_eq "flood: the busy ones say so" "$(grep -oP '503=\K[0-9]+' <<< "$(out flood)")" \
	"$(grep -P "^E\tflood\t" "$T/results" | grep -c " deny busy$")"
expect_eq "no egress socket folder is left" "" "$(ls "$T/tmp" | grep nightshift-egress)"
done_tests
