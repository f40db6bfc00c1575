#!/usr/bin/env bash
# Model clients end to end against the loopback mock, for both APIs: a multi-turn tool-using job,
# every injected fault retried or failed fast as the SDKs do (number and spacing of attempts),
# finish/stop reasons, usage accounting and limits, and secrets kept out of every artifact.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { skip "models" "python3 is needed for the mock server"; done_tests; exit; }

MOCKPID=
# KEEP=1 keeps the scratch directory for a look after a failure.
trap '[ -n "$MOCKPID" ] && kill $MOCKPID 2>/dev/null; [ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"' EXIT
mock() {  # mock SCRIPT_JSON: the server's script, from its start; sets PORT and MOCKLOG
	printf '%s' "$1" > "$T/script.json"
	MOCKLOG=$T/mock.log; : > "$MOCKLOG"
	[ -n "$MOCKPID" ] && resetmock && return
	stopmock
	rm -f "$T/port"
	python3 "$ROOT/tests/mockmodel.py" "$T/script.json" "$T/port" "$MOCKLOG" & MOCKPID=$!
	waitfor 60 test -s "$T/port"
	PORT=$(cat "$T/port")
}
# resetmock: the running server reads its script again and starts it over (once it answers, the
# next request is the script's first)
resetmock() {
	local line
	exec 3<>"/dev/tcp/127.0.0.1/$PORT" || return 1
	printf 'POST /__reset HTTP/1.0\r\nContent-Length: 0\r\n\r\n' >&3
	read -r -t 30 line <&3
	exec 3<&-
	[[ $line == *" 200 "* ]]
}
stopmock() { [ -n "$MOCKPID" ] && { kill $MOCKPID 2>/dev/null; wait $MOCKPID 2>/dev/null; }; MOCKPID=; }

# manifest PROVIDER [MODEL_KEYS] [JOB_KEYS]: writes $T/m.yaml for one job j against the mock
# (MODEL_KEYS default to "retries: 2").
manifest() {
	local base="http://127.0.0.1:$PORT/v1"
	[ "$1" = anthropic ] && base="http://127.0.0.1:$PORT"
	cat > "$T/m.yaml" <<YAML
version: 1
workspace: ws
secrets: [NIGHTLY_TOKEN]
models:
  default: { provider: $1, base_url: "$base", model: mock-1, api_key_env: MOCK_KEY, ${2:-retries: 2} }
workers:
  w:
    instructions: Check the data and report.
    tools: [read_file, write_file, list_dir]
    approval:
      rules:
        - { tool: list_dir, decision: allow }
        - { tool: read_file, decision: allow }
        - { tool: write_file, path: "reports/**", decision: allow }
        - { tool: read_file, path: "private/**", decision: deny }
    output:
      type: object
      required: [verdict]
      properties:
        verdict: { enum: [ok, needs-work] }
        note: { type: string }
jobs:
  j: { worker: w, input: "Check the data." ${3:+, $3} }
YAML
}
run() {  # run [FLAGS...]: runs $T/m.yaml, sets rc and dir, decompresses j's events to $T/ev.jsonl
	dir=$("$NS" run "$T/m.yaml" --out "$T/runs" "$@" 2>"$T/err"); rc=$?
	: > "$T/ev.jsonl"
	[ -f "$dir/jobs/j/events.jsonl.zst" ] && zstd -dcq "$dir/jobs/j/events.jsonl.zst" > "$T/ev.jsonl"
	return 0
}
# q EXPR: a Python expression over reqs (the mock's log), ev (j's events), resp (its
# model_response events), run (run.json) and gaps (seconds between requests).
q() {
	python3 - "$MOCKLOG" "$T/ev.jsonl" "${dir:-/nonexistent}/run.json" "$1" <<'PY'
import json, os, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ev = [json.loads(l) for l in open(sys.argv[2], errors="replace") if l.strip()]
resp = [e for e in ev if e["type"] == "model_response"]
run = json.load(open(sys.argv[3])) if os.path.exists(sys.argv[3]) else {}
gaps = [round(b["time"] - a["time"], 3) for a, b in zip(reqs, reqs[1:])]
print(eval(sys.argv[4]))
PY
}

export MOCK_KEY=sk-mock-SEEKRIT-1234567890
export NIGHTLY_TOKEN=tok-NIGHT-0987654321
mkdir -p "$T/ws/private"
echo "data-line-1" > "$T/ws/data.txt"
echo "private stuff" > "$T/ws/private/key.txt"

# --- a multi-turn tool-using job on each API ---
for P in openai anthropic; do
	if [ $P = openai ]; then c=openai_calls; x=openai_text; else c=anthropic_calls; x=anthropic_text; fi
	mock "[{\"$c\": [[\"list_dir\", {\"path\": \".\"}], [\"read_file\", {\"path\": \"data.txt\"}]], \"$x\": \"Looking.\"},
	       {\"$c\": [[\"read_file\", {\"path\": \"private/key.txt\"}], [\"write_file\", {\"path\": \"reports/r.md\", \"content\": \"all fine\"}]]},
	       {\"$x\": \"Thinking it over.\"},
	       {\"$c\": [[\"final_result\", {\"verdict\": \"maybe\"}]]},
	       {\"$c\": [[\"final_result\", {\"verdict\": \"ok\", \"note\": \"done\"}]]}]"
	manifest $P
	rm -rf "$T/ws/reports"
	run
	expect_rc "$P: the tool-using job succeeds" 0 "$rc"
	[ "$rc" = 0 ] || cat "$T/err"
	expect_eq "$P: five requests" 5 "$(q 'len(reqs)')"
	expect_eq "$P: every request keeps the API's rules" "[]" "$(q '[(r["n"], r["problems"]) for r in reqs if r["problems"]]')"
	check "$P: the allowed write happened" grep -q "all fine" "$T/ws/reports/r.md"
	expect_eq "$P: output.json" '{"note": "done", "verdict": "ok"}' \
		"$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), sort_keys=True))' "$dir/jobs/j/output.json")"
	expect_eq "$P: decisions in order, each by the rules" "['allow', 'allow', 'deny', 'allow']" \
		"$(q '[e["decision"] for e in ev if e["type"] == "decision"]')"
	if [ $P = openai ]; then
		expect_eq "$P: bearer key" "Bearer $MOCK_KEY" "$(q 'reqs[0]["headers"].get("Authorization")')"
		expect_eq "$P: model and tools[].type=function" "mock-1 {'function'}" \
			"$(q 'reqs[0]["body"]["model"] + " " + str({t["type"] for t in reqs[0]["body"]["tools"]})')"
		expect_eq "$P: system message first" "system" "$(q 'reqs[0]["body"]["messages"][0]["role"]')"
		# both calls of reply 1 answered, in order, right after the assistant message
		expect_eq "$P: two tool messages with tool_call_id, in order" "['call_0_0', 'call_0_1']" \
			"$(q '[m.get("tool_call_id") for m in reqs[1]["body"]["messages"][3:]]')"
		expect_eq "$P: read_file output reached the model" "True" \
			"$(q '"data-line-1" in reqs[1]["body"]["messages"][4]["content"]')"
		expect_eq "$P: the denied call answered first, naming the rule" "True" \
			"$(q '"denied by approval rule 4" in reqs[2]["body"]["messages"][6]["content"] and reqs[2]["body"]["messages"][6]["tool_call_id"] == "call_1_0"')"
		expect_eq "$P: a text-only reply is followed by a user nudge" "['assistant', 'user']" \
			"$(q '[m["role"] for m in reqs[3]["body"]["messages"][-2:]]')"
		expect_eq "$P: usage per job (input incl. cached, output, cached, reasoning)" "[500, 50, 200, 15]" \
			"$(q '[run["jobs"]["j"]["usage"][k] for k in ("input", "output", "cached", "reasoning")]')"
	else
		expect_eq "$P: x-api-key and anthropic-version" "$MOCK_KEY 2023-06-01 None" \
			"$(q '" ".join(str(reqs[0]["headers"].get(h)) for h in ("x-api-key", "anthropic-version", "Authorization"))')"
		expect_eq "$P: path /v1/messages" "/v1/messages" "$(q 'reqs[0]["path"]')"
		expect_eq "$P: max_tokens, system at the top level, no system role" "True True True" \
			"$(q 'isinstance(reqs[0]["body"]["max_tokens"], int), isinstance(reqs[0]["body"]["system"], str), all(m["role"] != "system" for m in reqs[0]["body"]["messages"])' | tr -d '(),')"
		expect_eq "$P: both tool_use answered first in the next user message, in order" "['toolu_0_0', 'toolu_0_1']" \
			"$(q '[b.get("tool_use_id") for b in reqs[1]["body"]["messages"][2]["content"]]')"
		expect_eq "$P: read_file output reached the model" "True" \
			"$(q '"data-line-1" in reqs[1]["body"]["messages"][2]["content"][1]["content"]')"
		expect_eq "$P: the denied call answered first, naming the rule" "True" \
			"$(q '"denied by approval rule 4" in reqs[2]["body"]["messages"][4]["content"][0]["content"]')"
		expect_eq "$P: roles alternate through the text-only reply" "['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user']" \
			"$(q '[m["role"] for m in reqs[3]["body"]["messages"]]')"
		expect_eq "$P: usage per job, normalised like OpenAI's (reasoning not reported)" "[500, 50, 200, 0]" \
			"$(q '[run["jobs"]["j"]["usage"][k] for k in ("input", "output", "cached", "reasoning")]')"
	fi
	expect_eq "$P: usage per turn in the events" "[100, 100, 100, 100, 100]" "$(q '[e["usage"]["input"] for e in resp]')"
	expect_eq "$P: usage of the run" "$(q 'run["jobs"]["j"]["usage"]')" "$(q 'run["usage"]')"
	expect_eq "$P: each response recorded whole" "5" "$(q 'sum(1 for e in resp if e["response"].get("usage"))')"
	expect_eq "$P: each request recorded (digest and new messages)" "5" "$(q 'sum(1 for e in ev if e["type"] == "model_request" and len(e.get("digest", "")) == 64 and isinstance(e.get("messages"), list))')"
done

# --- faults: retried or failed fast, with the number and spacing of attempts ---
# fault PROVIDER NAME SCRIPT WANT_RC WANT_REQUESTS [MODEL_KEYS] [JOB_KEYS]
fault() {
	local P=$1 name=$2
	mock "$3"
	manifest "$P" "${6:-}" "${7:-}"
	run
	expect_rc "$P $name: exit" "$4" "$rc"
	[ "$rc" = "$4" ] || cat "$T/err"
	expect_eq "$P $name: requests" "$5" "$(q 'len(reqs)')"
}
for P in openai anthropic; do
	if [ $P = openai ]; then done_="{\"openai_calls\": [[\"final_result\", {\"verdict\": \"ok\"}]]}"; overloaded=503
	else done_="{\"anthropic_calls\": [[\"final_result\", {\"verdict\": \"ok\"}]]}"; overloaded=529; fi

	fault $P "429 retry-after 1" "[{\"error\": 429, \"message\": \"Rate limit reached\", \"headers\": {\"retry-after\": \"1\"}}, $done_]" 0 2
	expect_eq "$P 429: waited at least the Retry-After" "True" "$(q 'gaps[0] >= 1.0')"
	expect_eq "$P 429: the failed attempt is in the events" "2 429 1000" \
		"$(q '"%d %d %d" % (resp[0]["attempts"], resp[0]["errors"][0]["status"], resp[0]["errors"][0]["wait_ms"])')"

	fault $P "429 retry-after-ms wins over retry-after" "[{\"error\": 429, \"headers\": {\"retry-after-ms\": \"300\", \"retry-after\": \"20\"}}, $done_]" 0 2
	expect_eq "$P 429 retry-after-ms: waited 300 ms, not 20 s" "True" "$(q '0.3 <= gaps[0] < 20')"

	fault $P "429 retry-after over 60 s ignored" "[{\"error\": 429, \"headers\": {\"retry-after\": \"120\"}}, $done_]" 0 2
	expect_eq "$P 429 retry-after 120: exponential backoff instead" "True" "$(q '0.375 <= gaps[0] < 60')"

	fault $P "500 twice" "[{\"error\": 500}, {\"error\": 500}, $done_]" 0 3
	expect_eq "$P 500: backoff 0.5 s then 1 s, less at most 25% jitter" "True" "$(q 'gaps[0] >= 0.375 and gaps[1] >= 0.75')"

	fault $P "$overloaded overloaded" "[{\"error\": $overloaded, \"message\": \"Overloaded\"}, $done_]" 0 2
	expect_eq "$P $overloaded: backoff" "True" "$(q 'gaps[0] >= 0.375')"

	fault $P "connection reset" "[{\"fault\": \"reset\"}, $done_]" 0 2
	fault $P "body cut off mid-JSON" "[{\"status\": 200, \"body\": {\"choices\": [], \"pad\": \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}, \"fault\": \"truncate\"}, $done_]" 0 2
	fault $P "malformed JSON" "[{\"status\": 200, \"fault\": \"malformed\"}, $done_]" 0 2
	expect_eq "$P malformed: the failed attempt is in the events" "True" "$(q '"not JSON" in resp[0]["errors"][0]["error"]')"

	fault $P "slow response past the timeout" "[{\"delay\": 3, \"error\": 500}]" 1 2 "timeout: 1s, retries: 1"
	expect_grep "$P slow: timed out, gave up after 2 attempts" "timed out.*gave up after 2 attempts" "$T/err"

	fault $P "500 until retries run out" "[{\"error\": 500, \"message\": \"server exploded\"}]" 1 3
	expect_grep "$P 500 x3: the provider's message and the count" "HTTP 500: server exploded.*gave up after 3 attempts" "$T/err"

	fault $P "401" "[{\"error\": 401, \"message\": \"invalid x-api-key\"}, $done_]" 1 1
	expect_grep "$P 401: fails in one attempt with the provider's message" "HTTP 401: invalid x-api-key \(authentication_error\) \(not retried\)" "$T/err"

	for s in 400 403 404 422; do
		fault $P "$s" "[{\"error\": $s, \"message\": \"no good $s\"}, $done_]" 1 1
		expect_grep "$P $s: not retried" "HTTP $s: no good $s.*not retried" "$T/err"
	done

	fault $P "x-should-retry: false" "[{\"error\": 503, \"headers\": {\"x-should-retry\": \"false\"}}, $done_]" 1 1
	fault $P "x-should-retry: true on a 400" "[{\"error\": 400, \"headers\": {\"x-should-retry\": \"true\"}}, $done_]" 0 2
done

# connection refused: nothing listens on the port; retried like any connection error
mock "[{\"openai_text\": \"x\"}]"
port=$PORT; stopmock; PORT=$port
manifest openai "retries: 1"
run
expect_rc "connection refused: exit 1" 1 "$rc"
expect_eq "connection refused: two attempts" "2" "$(q 'resp[0]["attempts"]')"
expect_grep "connection refused: said so" "no response: .*(refused|connect)" "$T/err"
# connect timeout: a port whose listen queue is full, so its SYNs are dropped (tests/blackhole.py)
rm -f "$T/bhport"
python3 "$ROOT/tests/blackhole.py" "$T/bhport" 60 & BHPID=$!
waitfor 60 test -s "$T/bhport"
PORT=$(cat "$T/bhport")
manifest openai "connect_timeout: 1s, timeout: 30s, retries: 1"
run
kill "$BHPID" 2>/dev/null; wait "$BHPID" 2>/dev/null
expect_rc "connect timeout: exit 1" 1 "$rc"
# curl names the time it waited: the connect_timeout's 1 s (well under 20 s on a loaded machine), not the timeout's 30 s
expect_grep "connect timeout: said so, two attempts" "Failed to connect.*after ([0-9]{1,4}|1[0-9]{4}) ms.*gave up after 2 attempts" "$T/err"

# --- finish and stop reasons: clear job errors ---
fault openai "finish_reason length" '[{"openai_text": "half a sent", "finish": "length"}]' 1 1
expect_grep "openai length: cut off" "cut off" "$T/err"
fault openai "refusal" '[{"refusal": "I cannot help with that."}]' 1 1
expect_grep "openai refusal: says so with the model's words" "refused: I cannot help with that" "$T/err"
fault openai "refusal with text" '[{"openai_text": "Sure, here is", "refusal": "I cannot help with that."}]' 1 1
expect_grep "openai refusal that came with text: still a refusal" "refused: I cannot help with that" "$T/err"
THINK='{"status": 200, "body": {"id": "msg_t", "type": "message", "role": "assistant", "model": "m", "stop_reason": "tool_use",
  "content": [{"type": "thinking", "thinking": "Look first.", "signature": "sig-ABC"}, {"type": "redacted_thinking", "data": "opaque=="},
              {"type": "tool_use", "id": "toolu_t", "name": "list_dir", "input": {"path": "."}}],
  "usage": {"input_tokens": 50, "output_tokens": 9}}}'
fault anthropic "thinking" "[$THINK, {\"anthropic_calls\": [[\"final_result\", {\"verdict\": \"ok\"}]]}]" 0 2 "retries: 0, thinking: 2048"
expect_eq "anthropic thinking: the budget sent, below max_tokens" "2048 True" "$(q 'reqs[0]["body"]["thinking"]["budget_tokens"], reqs[0]["body"]["max_tokens"] > 2048' | tr -d '(),')"
expect_eq "anthropic thinking: its blocks went back first and unchanged" "thinking sig-ABC redacted_thinking opaque== tool_use" \
	"$(q '" ".join([reqs[1]["body"]["messages"][1]["content"][0]["type"], reqs[1]["body"]["messages"][1]["content"][0]["signature"], reqs[1]["body"]["messages"][1]["content"][1]["type"], reqs[1]["body"]["messages"][1]["content"][1]["data"], reqs[1]["body"]["messages"][1]["content"][2]["type"]])')"
expect_eq "anthropic thinking: the mock found nothing the API would refuse" "[]" "$(q '[r["problems"] for r in reqs if r.get("problems")]')"
fault anthropic "stop_reason max_tokens" '[{"anthropic_text": "half a sent", "stop_reason": "max_tokens"}]' 1 1
expect_grep "anthropic max_tokens: cut off at the output cap, named" "cut off at its output cap \(4096 tokens" "$T/err"
fault anthropic "context window full" '[{"anthropic_text": "half", "stop_reason": "model_context_window_exceeded"}]' 1 1
expect_grep "anthropic: a full context window is not called an output cap" "filled the model's context window \(128000 tokens\)" "$T/err"
fault anthropic "stop_reason refusal" '[{"anthropic_text": "No.", "stop_reason": "refusal"}]' 1 1
expect_grep "anthropic refusal" "refused: No\." "$T/err"

# --- limits ---
fault anthropic "max_tokens limit" '[{"anthropic_text": "hmm", "usage": [2000, 10, 0]}]' 1 2 "retries: 2, max_output_tokens: 20" "max_tokens: 5000"
expect_grep "max_tokens: the job fails before the request that could pass it" "turn 3 not sent: max_tokens \(5000\) of job j would be passed: 4020 tokens spent" "$T/err"
fault openai "max_turns limit" '[{"openai_text": "hmm"}]' 1 3 "" "max_turns: 3"
expect_grep "max_turns: the job fails saying so" "max_turns \(3\) reached" "$T/err"

# --- secrets: a fake key and a secrets: value never reach the run directory or stderr ---
mock "[{\"openai_text\": \"I see $NIGHTLY_TOKEN and $MOCK_KEY\", \"openai_calls\": [[\"read_file\", {\"path\": \"$NIGHTLY_TOKEN.txt\"}], [\"write_file\", {\"path\": \"private/$MOCK_KEY\", \"content\": \"x\"}]]},
       {\"openai_calls\": [[\"final_result\", {\"verdict\": \"ok\", \"note\": \"token $NIGHTLY_TOKEN key $MOCK_KEY\"}]]},
       {\"error\": 401, \"message\": \"Incorrect API key provided: $MOCK_KEY.\"},
       {\"error\": 401, \"message\": \"Incorrect API key provided: sk-mock-*************7890. You can find your API key at https://example.com.\"},
       {\"error\": 500, \"message\": \"upstream said $NIGHTLY_TOKEN\"},
       {\"refusal\": \"I will not repeat $NIGHTLY_TOKEN\"}]"
manifest openai "retries: 0"
cat >> "$T/m.yaml" <<'YAML'
  k: { worker: w, input: "second" }
  l: { worker: w, input: "third" }
  m: { worker: w, input: "fourth" }
  n: { worker: w, input: "fifth" }
YAML
run
expect_rc "secrets: some jobs fail" 1 "$rc"
expect_eq "secrets: the mock got the key (it was used)" "Bearer $MOCK_KEY" "$(q 'reqs[0]["headers"].get("Authorization")')"
expect_eq "secrets: the model saw the secret in its conversation" "True" "$(q '"'"$NIGHTLY_TOKEN"'" in json.dumps(reqs[1]["body"])')"
mkdir -p "$T/flat"
for f in $(cd "$dir" && find . -type f); do
	case $f in
	*.tar.zst) zstd -dcq "$dir/$f" | tar -xOf - > "$T/flat/$(echo "$f" | tr / _)" 2>/dev/null ;;
	*.zst) zstd -dcq "$dir/$f" > "$T/flat/$(echo "$f" | tr / _)" ;;
	esac
done
for v in "$MOCK_KEY" "$NIGHTLY_TOKEN"; do
	check "secrets: no byte of ${v%%-*}… in any file of the run directory" bash -c "! grep -rqaF -- '$v' '$dir'"
	check "secrets: nor in any decompressed log or layer" bash -c "! grep -rqaF -- '$v' '$T/flat'"
	check "secrets: nor on stderr" bash -c "! grep -qaF -- '$v' '$T/err'"
	check "secrets: nor on stdout" bash -c "! printf '%s' '$dir' | grep -qaF -- '$v'"
done
expect_grep "secrets: masked where it was" '\[secret:NIGHTLY_TOKEN\]' "$dir/jobs/j/output.json"
expect_grep "secrets: the 401 message keeps its sense, key masked" "Incorrect API key provided: \[secret:MOCK_KEY\]" "$T/err"
expect_grep "secrets: a key echoed half starred out is masked too" "Incorrect API key provided: \[secret:api key\]" "$T/err"

# --- --model NAME=SPEC swaps a model without editing the manifest ---
	cat > "$T/replies.yaml" <<'YAML'
- text: dry run
- tool_calls:
    - { name: final_result, arguments: { verdict: needs-work } }
YAML
	mock '[{"error": 500}]'
	manifest openai
	run --model "default=scripted:$T/replies.yaml"
	expect_rc "--model default=scripted:FILE: dry run succeeds" 0 "$rc"
	expect_eq "--model scripted: the network was not used" 0 "$(q 'len(reqs)')"
	check "--model scripted: its output" grep -q needs-work "$dir/jobs/j/output.json"
	mock '[{"anthropic_calls": [["final_result", {"verdict": "ok"}]]}]'
	manifest openai
	run --model "default=anthropic:claude-x@http://127.0.0.1:$PORT,key=MOCK_KEY"
	expect_rc "--model default=anthropic:MODEL@URL,key=ENV" 0 "$rc"
	expect_eq "--model: the swapped provider and model were used" "/v1/messages claude-x $MOCK_KEY" \
		"$(q 'reqs[0]["path"] + " " + reqs[0]["body"]["model"] + " " + reqs[0]["headers"].get("x-api-key", "")')"
	run --model "defualt=openai:x"
	expect_rc "--model with a name not in the manifest: usage error" 2 "$rc"
	expect_grep "--model typo named" "no model 'defualt'" "$T/err"
stopmock
done_tests
