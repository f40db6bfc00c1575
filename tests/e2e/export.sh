#!/usr/bin/env bash
# export: a run as OTLP/HTTP JSON traces. The shape (run -> job -> chat and execute_tool spans,
# the denial on its span) is checked here; the JSON is checked against OpenTelemetry's own packages
# from the npm registry (opentelemetry-proto messages as generated in @opentelemetry/otlp-transformer,
# attribute names from @opentelemetry/semantic-conventions); a POST goes to a loopback receiver
# with the headers of OTEL_EXPORTER_OTLP_HEADERS.
. "$(dirname "$0")/lib.sh"
cd "$T"
cp -r "$ROOT/examples/hello" hello
rm -rf hello/runs hello/workspace/reports
run=$("$NS" run hello/nightshift.yaml --out "$T/runs" 2>/dev/null)
expect_rc "example runs" 0 $?

"$NS" export "$run" --otlp "$T/t.json" 2>"$T/e.err"
expect_rc "export to a file" 0 $?
"$NS" export "$run" --otlp - >"$T/t2.json"
expect_rc "export to stdout" 0 $?
expect_eq "the same trace twice (ids from the run)" "$(cat "$T/t.json")" "$(cat "$T/t2.json")"
python3 - "$T/t.json" >"$T/shape" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
spans = d["resourceSpans"][0]["scopeSpans"][0]["spans"]
by = {s["spanId"]: s for s in spans}
attrs = lambda s: {a["key"]: list(a["value"].values())[0] for a in s.get("attributes", [])}
run = [s for s in spans if "parentSpanId" not in s]
jobs = [s for s in spans if attrs(s).get("gen_ai.operation.name") == "invoke_agent"]
chats = [s for s in spans if attrs(s).get("gen_ai.operation.name") == "chat"]
tools = [s for s in spans if attrs(s).get("gen_ai.operation.name") == "execute_tool"]
denied = [s for s in tools if attrs(s).get("nightshift.decision") == "deny"]
print("roots", len(run))
print("jobs", len(jobs), "under run", all(j["parentSpanId"] == run[0]["spanId"] for j in jobs))
print("chats", len(chats), "tools", len(tools), "under job", all(s["parentSpanId"] == jobs[0]["spanId"] for s in chats + tools))
print("one trace", len({s["traceId"] for s in spans}) == 1)
print("denied", len(denied), denied[0]["status"]["code"] if denied else None, attrs(denied[0]).get("error.type") if denied else None)
print("chat kind", chats[0]["kind"], "tokens attr", "gen_ai.usage.input_tokens" in attrs(chats[0]))
print("exit code", [attrs(s).get("process.exit.code") for s in tools if attrs(s).get("gen_ai.tool.name") == "shell"][0])
EOF
expect_grep "one root span" '^roots 1$' "$T/shape"
expect_grep "one job span under the run" '^jobs 1 under run True$' "$T/shape"
expect_grep "a chat span per turn, a tool span per call, under the job" '^chats 5 tools 4 under job True$' "$T/shape"
expect_grep "one trace id" '^one trace True$' "$T/shape"
expect_grep "the denied call is an error span" '^denied 1 2 denied$' "$T/shape"
expect_grep "chat spans are client spans with usage" '^chat kind 3 tokens attr True$' "$T/shape"
expect_grep "a shell call's exit code" '^exit code 0$' "$T/shape"

"$NS" export "$T" --otlp "$T/x.json" 2>/dev/null
expect_rc "export of a folder that is not a run" 2 $?
"$NS" export "$run" 2>/dev/null
expect_rc "export without --otlp" 2 $?
"$NS" export "$run" --otlp "$T/no/such/dir/x.json" 2>/dev/null
expect_rc "export to a file that cannot be made" 1 $?

# --- a loopback receiver ---------------------------------------------------------------------------
cat >recv.py <<'EOF'
import http.server, json, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        ok = self.path == "/v1/traces" and self.headers["Content-Type"] == "application/json"
        open(sys.argv[2], "a").write(json.dumps({"path": self.path, "ok": ok, "auth": self.headers.get("x-honeycomb-team"),
                                                  "spans": len(json.loads(body)["resourceSpans"][0]["scopeSpans"][0]["spans"])}) + "\n")
        self.send_response(200 if ok else 400)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}" if ok else b'{"message":"bad path"}')
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_port))
s.serve_forever()
EOF
python3 recv.py port got &
recv=$!
waitfor 60 test -s port
OTEL_EXPORTER_OTLP_HEADERS="x-honeycomb-team=s%3Dcret,other=1" "$NS" export "$run" --otlp "http://127.0.0.1:$(cat port)/v1/traces" 2>"$T/post.err"
expect_rc "POST to a receiver" 0 $?
expect_grep "the receiver got the spans and the header (percent-decoded)" '"ok": true, "auth": "s=cret", "spans": 11' got
"$NS" export "$run" --otlp "http://127.0.0.1:$(cat port)/wrong" 2>"$T/post2.err"
expect_rc "a receiver that refuses" 1 $?
expect_grep "the refusal is quoted" 'answered 400' "$T/post2.err"
kill $recv 2>/dev/null
"$NS" export "$run" --otlp "http://127.0.0.1:9/v1/traces" 2>/dev/null
expect_rc "no receiver" 1 $?

# --- OpenTelemetry's own packages ------------------------------------------------------------------
cache=${NIGHTSHIFT_NPM_CACHE:-/var/tmp/nightshift-test-npm}/otlp
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	skip "OTLP protocol check" "node or npm missing"
else
	if [ ! -f "$cache/node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js" ] ||
		[ ! -d "$cache/node_modules/@opentelemetry/semantic-conventions" ]; then
		mkdir -p "$cache"
		timeout 300 npm install --prefix "$cache" --no-audit --no-fund --loglevel=error \
			@opentelemetry/otlp-transformer@0.52.1 @opentelemetry/semantic-conventions@1 >"$T/npm.log" 2>&1
	fi
	if [ ! -f "$cache/node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js" ]; then
		skip "OTLP protocol check" "npm install failed: $(tail -n 2 "$T/npm.log" | tr '\n' ' ')"
	else
		NODE_PATH="$cache/node_modules" node "$ROOT/tests/fixtures/otlpcheck.js" "$T/t.json" >"$T/proto.out" 2>&1
		expect_rc "decodes into opentelemetry-proto with no unknown field; names from the semantic conventions" 0 $?
		expect_grep "every span checked" '^ok 11 spans$' "$T/proto.out"
		# The checker is not blind: a misspelt field and an invented attribute are caught.
		python3 -c "
import json; d=json.load(open('$T/t.json')); s=d['resourceSpans'][0]['scopeSpans'][0]['spans'][1]
s['parentSpanID']=s.pop('parentSpanId'); s['attributes'].append({'key':'gen_ai.tokens','value':{'stringValue':'x'}})
json.dump(d, open('$T/bad.json','w'))"
		NODE_PATH="$cache/node_modules" node "$ROOT/tests/fixtures/otlpcheck.js" "$T/bad.json" >"$T/bad.out" 2>&1
		expect_rc "a broken export is refused by the checker" 1 $?
		expect_grep "the misspelt field named" 'parentSpanID: not a field' "$T/bad.out"
		expect_grep "the invented attribute named" 'gen_ai.tokens is not in the semantic conventions' "$T/bad.out"
	fi
fi
skip "a real OTLP receiver" "no OTLP receiver (OpenTelemetry Collector, Jaeger) is packaged in Debian 12 or on npm; the loopback receiver above stands in"
done_tests
