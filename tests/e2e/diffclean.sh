#!/usr/bin/env bash
# Untrusted text reaches the terminal only through the one sanitiser (util/term.h): `diff` prints
# the paths and contents a model wrote (terminal escapes ESC/CSI/OSC, C1 controls, CR, bidi
# controls, workflow commands) shown, not obeyed; `export` prints a server's answer the same way.
source "$(dirname "$0")/lib.sh"
unset GITHUB_ACTIONS
mkdir -p "$T/p/ws"
cat > "$T/p/m.yaml" <<'YAML'
version: 1
workspace: ws
sandbox: { backend: none }
models:
  d:
    provider: scripted
    replies:
      - tool_calls: [ {name: write_file, arguments: {path: "a.txt", content: "one\n"}} ]
      - tool_calls: [ {name: shell, arguments: {command: "printf 'x\\n::set-output name=a::b\\n  ::error::planted\\n\\033]0;title\\007\\033[2J\\rover\\302\\233\\342\\200\\256 ##[group]g\\n' > a.txt; printf 'z' > \"$(printf 'n\\033[31mred\\r\\n::warning::p')\""}} ]
      - tool_calls: [ {name: shell, arguments: {command: "true"}} ]
      - tool_calls: [ {name: final_result, arguments: {}} ]
workers:
  w: { model: d, instructions: x, tools: [shell, write_file], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
run=$("$NS" run "$T/p/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the night that writes hostile text runs" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
check "the file with a hostile name is there" bash -c "ls '$T/p/ws' | grep -q red"

hostile() { # hostile FILE: raw ESC, CR, C1 CSI (c2 9b) or RLO (e2 80 ae) in FILE
	python3 -c '
import sys
b = open(sys.argv[1], "rb").read()
sys.exit(0 if any(x in b for x in (b"\x1b", b"\r", b"\xc2\x9b", b"\xe2\x80\xae", b"\x07")) else 1)' "$1"
}
for ga in "" true; do
	GITHUB_ACTIONS=$ga "$NS" diff "$run" --step 2 > "$T/d.out" 2> "$T/d.err"; rc=$?
	expect_rc "diff of the step (GITHUB_ACTIONS=$ga)" 0 "$rc"
	check "diff shows the change (GITHUB_ACTIONS=$ga)" grep -q '^+::set-output' "$T/d.out"
	check "no terminal control passes raw (GITHUB_ACTIONS=$ga)" bash -c "! hostile() { $(declare -f hostile | tail -n +2); }; ! python3 -c '
import sys
b = open(sys.argv[1], \"rb\").read()
sys.exit(0 if any(x in b for x in (b\"\\x1b\", b\"\\r\", b\"\\xc2\\x9b\", b\"\\xe2\\x80\\xae\", b\"\\x07\")) else 1)' '$T/d.out'"
	check "escapes are shown (GITHUB_ACTIONS=$ga)" grep -qF '\x1b]0;title\x07\x1b[2J\x0dover\u009b\u202e' "$T/d.out"
	check "a path's newline does not start a line of its own (GITHUB_ACTIONS=$ga)" bash -c "! grep -q '^::warning' '$T/d.out'"
	check "the hostile path shown escaped (GITHUB_ACTIONS=$ga)" grep -qE 'n\\x1b\[31mred\\x0d (::|%3A:)warning::p' "$T/d.out"
done
# under Actions no line is a workflow command
GITHUB_ACTIONS=true "$NS" diff "$run" --step 2 > "$T/d.out" 2>&1
check "under Actions, no line the runner takes for a command" bash -c "! grep -qE '^[[:space:]]*::|##\\[' '$T/d.out'"

# export: a server's error body goes through the sanitiser too
cat > "$T/srv.py" <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = b"\x1b]0;pwned\x07\x1b[2J\r::error::from the server\n::set-output name=x::y\xc2\x9b"
        self.send_response(500); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_address[1]))
s.serve_forever()
PY
python3 "$T/srv.py" "$T/port" & SRV=$!
waitfor 60 test -s "$T/port"
GITHUB_ACTIONS=true "$NS" export "$run" --otlp "http://127.0.0.1:$(cat "$T/port")/v1/traces" > /dev/null 2> "$T/x.err"; rc=$?
kill $SRV; wait $SRV 2>/dev/null
expect_rc "export to a server that answers 500" 1 "$rc"
check "export names the answer" grep -q 'answered 500' "$T/x.err"
check "the server's body passes no control raw" bash -c "! python3 -c '
import sys
b = open(sys.argv[1], \"rb\").read()
sys.exit(0 if any(x in b for x in (b\"\\x1b\", b\"\\r\", b\"\\xc2\\x9b\", b\"\\x07\")) else 1)' '$T/x.err'"
check "nor a workflow command" bash -c "! grep -qE '^[[:space:]]*::' '$T/x.err'"
done_tests
