#!/usr/bin/env bash
# live: watching a night as it runs, against a loopback model that takes time per turn and streams
# (tests/streammodel.py): progress lines and --events before the job ends, the run directory on
# stdout first and surviving SIGKILL, give-up after max_text_turns, the provider's smaller window
# recovered from, an endpoint down at the start outlasted, a stalled stream abandoned after
# idle_timeout and retried, streamed Anthropic answers, and the look of the lines on a terminal.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { skip "live" "python3 is needed for the model server"; done_tests; exit; }
command -v jq >/dev/null || { skip "live" "jq is needed to read --events (apt-get install jq)"; done_tests; exit; }

MOCKPID=
RUNPID=
trap '[ -n "$MOCKPID" ] && kill $MOCKPID 2>/dev/null; [ -n "$RUNPID" ] && kill -9 $RUNPID 2>/dev/null; [ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"' EXIT
mark="live$$x$RANDOM"
jqtrue() { jq -e "$@" >/dev/null; }

# serve CONFIG_JSON: start the model server afresh; sets PORT and LOG
serve() {
	[ -n "$MOCKPID" ] && { kill $MOCKPID 2>/dev/null; wait $MOCKPID 2>/dev/null; }
	printf '%s' "$1" > "$T/config.json"
	LOG=$T/model.log; : > "$LOG"
	rm -f "$T/port" "$T/port.up"
	python3 "$ROOT/tests/streammodel.py" "$T/config.json" "$T/port" "$LOG" & MOCKPID=$!
	waitfor 60 test -s "$T/port"
	PORT=$(cat "$T/port")
}

# manifest MODEL_KEYS [WORKER_KEYS] [PROVIDER]: one job j for worker w
manifest() {
	local base="http://127.0.0.1:$PORT/v1"
	[ "${3:-openai}" = anthropic ] && base="http://127.0.0.1:$PORT"
	mkdir -p "$T/ws"
	cat > "$T/m.yaml" <<YAML
version: 1
workspace: ws
models:
  d: { provider: ${3:-openai}, base_url: "$base", model: m-$mark, $1 }
workers:
  w:
    model: d
    instructions: Do the work.
    tools: [shell, list_dir]
    approval: { default: allow, rules: [ { tool: shell, command: "rm *", decision: deny } ] }
    ${2:-}
jobs:
  j: { worker: w }
YAML
}

steps() {  # steps N: N shell calls, then final_result
	local s="" i
	for i in $(seq "$1"); do s="$s{\"calls\": [[\"shell\", {\"command\": \"echo step $i\"}]]}, "; done
	echo "[$s{\"calls\": [[\"final_result\", {\"ok\": true}]]}]"
}

# --- progress lines, --events and the run directory while the job runs ---
# The 3rd model answer waits for a file the test makes: everything checked before it is made was
# printed while the job was still running.
serve "{\"delay\": 0.2, \"script\": [{\"calls\": [[\"shell\", {\"command\": \"echo one\"}]]}, {\"text\": \"then \\u001b[31mred\\u001b[0m\", \"calls\": [[\"shell\", {\"command\": \"rm -rf x\"}]]}, {\"wait\": \"$T/go\", \"calls\": [[\"final_result\", {\"ok\": true}]]}]}"
manifest "idle_timeout: 30s"
rm -f "$T/err" "$T/out" # the shell empties them only in the forked job: no old line ends a wait
"$NS" run "$T/m.yaml" --events "$T/ev.jsonl" >"$T/out" 2>"$T/err" & RUNPID=$!
waitfor 60 grep -q "step 2: shell" "$T/err"
check "run dir on stdout before the end" test -s "$T/out"
expect_eq "one line on stdout, absolute" "1 /" "$(wc -l <"$T/out") $(head -c1 "$T/out")"
check "the run dir exists" test -d "$(cat "$T/out")"
expect_grep "progress: the job started" "job j: started" "$T/err"
expect_grep "progress: a model request with tokens, cost and time" "job j: turn 1: [0-9]+ in / 7 out tokens, 1 tool call, \\\$[0-9.]+ so far, [0-9.]+s, streamed" "$T/err"
expect_grep "progress: a tool call with arguments, decision, rule, exit and time" "job j: step 1: shell echo one: allow \(default\): exit 0, [0-9.]+s" "$T/err"
expect_grep "progress: a denial with its rule" "job j: step 2: shell rm -rf x: deny \(rule 1\)" "$T/err"
check "the job has not ended yet" running "$T/m.yaml"
expect_nogrep "the job has not ended yet (no end line)" "job j: succeeded" "$T/err"
check "--events: JSON lines before the end" jqtrue -s 'length > 3' "$T/ev.jsonl"
expect_eq "--events: every line a JSON object with v 1" "true" "$(jq -s 'all(.[]; .v == 1 and (.type | type) == "string" and (.time | type) == "string")' "$T/ev.jsonl")"
expect_eq "--events: the run's start first, with the run dir" "run_start $(cat "$T/out")" "$(head -1 "$T/ev.jsonl" | jq -r '"\(.type) \(.run)"')"
expect_eq "--events: the job's events carry its id" "true" "$(jq -s '[.[] | select(.type == "decision")] | length == 2 and all(.[]; .job == "j")' "$T/ev.jsonl")"
touch "$T/go"
wait $RUNPID; rc=$?; RUNPID=
expect_rc "the run succeeds" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
expect_eq "still one line on stdout" 1 "$(wc -l <"$T/out")"
expect_grep "progress: the end with totals" "job j: succeeded \(3 turns, 2 steps, [0-9]+ in / 21 out tokens, \\\$[0-9.]+, [0-9.]+s\)" "$T/err"
expect_nogrep "no escape from the model's text reaches stderr" $'\x1b' "$T/err"
expect_eq "--events: the run's end last, sealed" "run_end succeeded true" "$(tail -1 "$T/ev.jsonl" | jq -r '"\(.type) \(.status) \(.sealed)"')"
run=$(cat "$T/out")
expect_eq "--events: the same events as the log, in order" \
	"$(zstd -dcq "$run/jobs/j/events.jsonl.zst" | jq -c '.seq')" "$(jq -c 'select(.job == "j" and .seq != null) | .seq' "$T/ev.jsonl")"
expect_eq "--events: an event equals its log line but for v and job" \
	"$(zstd -dcq "$run/jobs/j/events.jsonl.zst" | sed -n 3p | jq -cS 'del(.job)')" \
	"$(jq -cS 'select(.job == "j" and .seq == 2) | del(.v, .job)' "$T/ev.jsonl")"
expect_eq "the streamed answer is recorded in the plain shape" "chat.completion call_1_0 shell 7" \
	"$(zstd -dcq "$run/jobs/j/events.jsonl.zst" | jq -r 'select(.type == "model_response" and .turn == 1) | "\(.response.object) \(.response.choices[0].message.tool_calls[0].id) \(.response.choices[0].message.tool_calls[0].function.name) \(.response.usage.completion_tokens)"')"
expect_eq "the model was asked to stream" "true" "$(jq -s 'all(.[]; .stream)' "$LOG")"
"$NS" audit "$run" --verify >"$T/audit" 2>&1
expect_rc "a streamed run verifies" 0 $?

# --events - : the events on stderr in place of the progress lines
"$NS" run "$T/m.yaml" --events - >"$T/out2" 2>"$T/err2"
expect_rc "--events -: the run succeeds" 0 $?
expect_eq "--events -: stderr is JSON lines only" "true" "$(jq -s 'length > 5 and all(.[]; .v == 1)' "$T/err2" 2>/dev/null || echo false)"
"$NS" run "$T/m.yaml" --quiet >"$T/out3" 2>"$T/err3"
expect_eq "--quiet: nothing on stderr, the run dir on stdout" "0 1" "$(wc -l <"$T/err3") $(wc -l <"$T/out3")"
"$NS" run "$T/m.yaml" --events "$T/no/such/dir/ev" >"$T/out4" 2>"$T/err4"
expect_rc "--events into a folder that does not exist: a usage error" 2 $?
expect_eq "... and no run directory" "" "$(cat "$T/out4")"

# a job that never starts still has its job_end in the stream
cat >> "$T/m.yaml" <<YAML
  nope: { worker: w, needs: [j], input: "\${{ jobs.j.output.absent }}" }
  k: { worker: w, needs: [nope] }
YAML
"$NS" run "$T/m.yaml" --events "$T/ev5.jsonl" >/dev/null 2>"$T/err5"
expect_eq "--events: a skipped job's job_end, without seq" "skipped false null" \
	"$(jq -r 'select(.type == "job_end" and .job == "k") | "\(.status) \(.ran) \(.seq)"' "$T/ev5.jsonl")"

# secrets: a value of secrets: in the model's arguments is masked in the progress lines and events
export LIVE_SECRET=live-SECRET-$RANDOM$RANDOM
serve "{\"script\": [{\"calls\": [[\"shell\", {\"command\": \"echo $LIVE_SECRET\"}]]}, {\"calls\": [[\"final_result\", {\"ok\": true}]]}]}"
manifest "retries: 0"
sed -i 's/^workspace: ws$/workspace: ws\nsecrets: [LIVE_SECRET]/' "$T/m.yaml"
"$NS" run "$T/m.yaml" --events "$T/ev6.jsonl" >/dev/null 2>"$T/err6"
expect_grep "secrets: the call's line is there" "step 1: shell echo" "$T/err6"
expect_nogrep "secrets: not on stderr" "$LIVE_SECRET" "$T/err6"
expect_nogrep "secrets: not in --events" "$LIVE_SECRET" "$T/ev6.jsonl"
rm -f "$T/go"

# --- the run directory survives SIGKILL ---
serve "{\"delay\": 0.2, \"script\": [{\"calls\": [[\"shell\", {\"command\": \"echo one\"}]]}, {\"calls\": [[\"shell\", {\"command\": \"echo two\"}]]}, {\"wait\": \"$T/go\", \"calls\": [[\"final_result\", {\"ok\": true}]]}]}"
manifest "idle_timeout: 30s"
rm -f "$T/err" "$T/out"
"$NS" run "$T/m.yaml" >"$T/out" 2>"$T/err" & RUNPID=$!
waitfor 60 grep -q "step 2: shell" "$T/err"
kill -9 $RUNPID; wait $RUNPID 2>/dev/null; RUNPID=
touch "$T/go"
check "killed: the run dir was printed" test -d "$(cat "$T/out")"
"$NS" finalize "$(cat "$T/out")" >"$T/fin" 2>&1
expect_rc "killed: finalize seals the run it names" 0 $?

# --- give-up: replies without a tool call end the job after max_text_turns ---
serve '{"script": [{"text": "I could not finish the task.\nStopping \u001b[2Jhere."}]}'
manifest "retries: 0" "max_text_turns: 2"
"$NS" run "$T/m.yaml" >"$T/out" 2>"$T/err"
expect_rc "give-up: the job fails" 1 $?
expect_eq "give-up: two requests, not max_turns" 2 "$(wc -l <"$LOG")"
expect_grep "give-up: says the model stopped using its tools, quoting it" \
	'stopped using its tools: 2 replies in a row without a tool call \(max_text_turns 2\); its last words: "I could not finish the task\. Stopping .*here\."' "$T/err"
expect_nogrep "give-up: the quote is sanitised" $'\x1b' "$T/err"
expect_eq "give-up: run.json says why" "true" \
	"$(jq '.jobs.j.error | test("max_text_turns")' "$(cat "$T/out")/run.json")"
serve '{"script": [{"text": "hmm"}]}'
manifest "retries: 0"
"$NS" run "$T/m.yaml" >"$T/out" 2>"$T/err"
expect_eq "give-up: the default is 3" 3 "$(wc -l <"$LOG")"

# --- the provider's window wins: lowered, elided, asked again ---
# two big tool results: the request after the second passes the provider's 3000 tokens (the
# manifest says 200000); the first of them is elided and the request fits
big="head -c 5000 /dev/zero | tr '\\\\0' x"
WINDOW="{\"window\": 3000, \"script\": [{\"calls\": [[\"shell\", {\"command\": \"$big\"}]]}, {\"calls\": [[\"shell\", {\"command\": \"$big\"}]]}, {\"calls\": [[\"final_result\", {\"ok\": true}]]}]}"
serve "$WINDOW"
manifest "retries: 0, context_window: 200000, max_output_tokens: 500"
"$NS" run "$T/m.yaml" --events "$T/ev.jsonl" >"$T/out" 2>"$T/err"
rc=$?
expect_rc "window: the job recovers and succeeds" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
expect_grep "window: said, with the provider's number" "window lowered from 200000 to 3000 tokens" "$T/err"
expect_grep "window: the old result was elided" "elided to fit the window \(3000 tokens\)" "$T/err"
expect_eq "window: one refusal, then answers" "400" "$(jq -r 'select(.status == 400) | .status' "$LOG" | tr -d '\n')"
expect_eq "window: the refusal is recorded with the window" "3000" \
	"$(jq -r 'select(.type == "model_response" and .provider_window) | .provider_window' "$T/ev.jsonl")"
"$NS" replay "$(cat "$T/out")" >"$T/rout" 2>"$T/rerr"
expect_rc "window: the night replays, the window lowered again as recorded" 0 $?
serve '{"window": 600, "script": [{"calls": [["final_result", {"ok": true}]]}]}'
manifest "retries: 0, context_window: 200000, max_output_tokens: 500"
"$NS" run "$T/m.yaml" >"$T/out" 2>"$T/err"
expect_rc "window: one that can never fit fails" 1 $?
expect_grep "window: the message names context_window" "context_window" "$T/err"
expect_eq "window: asked once more only" 1 "$(grep -c '"status": 400' "$LOG")"
serve "$WINDOW"
manifest "retries: 0, context_window: 200000, max_output_tokens: 500" "" anthropic
"$NS" run "$T/m.yaml" >"$T/out" 2>"$T/err"
expect_rc "window: Anthropic's words (prompt is too long: N tokens > M maximum) too" 0 $?
expect_grep "window: Anthropic's maximum taken" "window lowered from 200000 to 3000 tokens" "$T/err"

# --- an endpoint down at the start does not fail the night ---
serve "{\"down\": 3, \"script\": $(steps 1)}"
manifest "retry_for: 60s"
"$NS" run "$T/m.yaml" --events "$T/ev.jsonl" >"$T/out" 2>"$T/err"
rc=$?
expect_rc "down 3 s: the job succeeds" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
check "down 3 s: the server was down, then up" test -e "$T/port.up"
expect_grep "down: each retry in the progress, with its wait" "turn 1: attempt 1 failed: no response: .*; retrying in [0-9.]+s \([0-9]+s of retry_for left\)" "$T/err"
expect_grep "down: the turn's line counts retries and the wait" "turn 1: .*[0-9]+ retr(y|ies), waited [0-9.]+s" "$T/err"
check "down: retries as events" jqtrue -s '[.[] | select(.type == "model_retry" and .status == 0 and .wait_ms > 0)] | length >= 1' "$T/ev.jsonl"
run=$(cat "$T/out")
expect_eq "down: the attempts and waits in the log" "true" \
	"$(zstd -dcq "$run/jobs/j/events.jsonl.zst" | jq -s '[.[] | select(.type == "model_response")][0] | .attempts > 1 and .waited_ms > 0 and (.errors | length) == .attempts - 1')"
"$NS" audit "$run" >"$T/audit" 2>&1
expect_grep "down: audit shows the retries" "retr" "$T/audit"
serve '{"down": 30, "script": [{"calls": [["final_result", {"ok": true}]]}]}'
manifest "retry_for: 2s"
"$NS" run "$T/m.yaml" >"$T/out" 2>"$T/err"
expect_rc "down past retry_for: the job fails" 1 $?
expect_grep "down past retry_for: says so" "gave up after [0-9]+ attempts in [0-9]+s: retry_for 2s" "$T/err"

# --- a stalled stream: headers, then nothing; abandoned after idle_timeout, retried ---
serve '{"script": [{"stall": true}, {"calls": [["final_result", {"ok": true}]]}]}'
manifest "idle_timeout: 1s, timeout: 120s"
"$NS" run "$T/m.yaml" >"$T/out" 2>"$T/err"
rc=$?
expect_rc "stall: the job succeeds on the retry" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
expect_eq "stall: two requests" 2 "$(wc -l <"$LOG")"
expect_grep "stall: told apart from the timeout" "no byte for 1s \(idle_timeout\)" "$T/err"
expect_nogrep "stall: not called a timeout" "timed out" "$T/err"
run=$(cat "$T/out")
expect_eq "stall: the attempt is marked idle in the log" "true" \
	"$(zstd -dcq "$run/jobs/j/events.jsonl.zst" | jq -s '[.[] | select(.type == "model_response")][0].errors[0].idle')"

# --- a server that answers plain JSON to a streaming request still works ---
serve "{\"stream\": false, \"script\": $(steps 2)}"
manifest "idle_timeout: 1s"
"$NS" run "$T/m.yaml" >"$T/out" 2>"$T/err"
expect_rc "plain JSON: the job succeeds" 0 $?
expect_eq "plain JSON: asked to stream once, then plainly" "true false false" "$(jq -r '.stream' "$LOG" | paste -sd' ')"

# --- Anthropic streamed: text, tool use, usage ---
serve "{\"delay\": 0.1, \"script\": [{\"text\": \"Looking.\", \"calls\": [[\"shell\", {\"command\": \"echo a\"}]]}, {\"calls\": [[\"final_result\", {\"ok\": true}]]}]}"
manifest "retries: 0" "" anthropic
"$NS" run "$T/m.yaml" >"$T/out" 2>"$T/err"
rc=$?
expect_rc "anthropic streamed: succeeds" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
run=$(cat "$T/out")
expect_eq "anthropic streamed: recorded as a message with its blocks and usage" "message text Looking. tool_use shell echo a 7" \
	"$(zstd -dcq "$run/jobs/j/events.jsonl.zst" | jq -r 'select(.type == "model_response" and .turn == 1) | .response | "\(.type) \(.content[0].type) \(.content[0].text) \(.content[1].type) \(.content[1].name) \(.content[1].input.command) \(.usage.output_tokens)"')"
"$NS" replay "$run" >"$T/rout" 2>"$T/rerr"
expect_rc "anthropic streamed: replays from the record" 0 $?
expect_eq "replay: the run dir first, one line" 1 "$(wc -l <"$T/rout")"

# --- the look on a terminal (script gives a pty), and without one ---
if command -v script >/dev/null; then
	serve "{\"script\": $(steps 1)}"
	manifest "retries: 0"
	TERM=xterm script -qec "'$NS' run '$T/m.yaml' >'$T/out'" "$T/tty1" >/dev/null 2>&1
	expect_grep "tty: colour" $'\x1b\\[[0-9;]*m' "$T/tty1"
	expect_grep "tty: a job's line" "job j.*step 1: shell echo step 1" "$T/tty1"
	serve "{\"script\": $(steps 1)}"
	manifest "retries: 0"
	NO_COLOR=1 TERM=xterm script -qec "'$NS' run '$T/m.yaml' >'$T/out'" "$T/tty2" >/dev/null 2>&1
	expect_nogrep "tty with NO_COLOR: no colour" $'\x1b\\[[0-9;]*m' "$T/tty2"
	expect_grep "tty with NO_COLOR: the lines still there" "step 1: shell echo step 1" "$T/tty2"
	serve "{\"script\": $(steps 1)}"
	manifest "retries: 0"
	"$NS" run "$T/m.yaml" 2>"$T/pipe" >/dev/null
	expect_nogrep "a pipe: no escape at all" $'\x1b' "$T/pipe"
	expect_grep "a pipe: timestamped lines" "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z nightshift: job j: step 1" "$T/pipe"
else
	skip "live tty" "script (bsdutils) is not installed"
fi

# --- heartbeats: a long step leaves lines while it runs ---
serve '{"script": [{"calls": [["shell", {"command": "sleep 4"}]]}, {"calls": [["final_result", {"ok": true}]]}]}'
manifest "retries: 0"
NIGHTSHIFT_HEARTBEAT=1 "$NS" run "$T/m.yaml" >"$T/out" 2>"$T/err"
expect_rc "heartbeat: the job succeeds" 0 $?
expect_grep "heartbeat: a line while the step ran" "job j: still step 1: shell \([0-9]+s since its last news; turn 1, step 1\)" "$T/err"

# --- GitHub Actions: the job's group is printed as the job runs ---
# (a file of its own: the shell empties a redirect only once the job is forked, and an old err
# holding "step 1: shell" would end the wait before this run wrote anything)
serve "{\"script\": [{\"calls\": [[\"shell\", {\"command\": \"echo ::warning::x\"}]]}, {\"wait\": \"$T/go2\", \"calls\": [[\"final_result\", {\"ok\": true}]]}]}"
manifest "retries: 0"
GITHUB_ACTIONS=true GITHUB_OUTPUT=$T/gh.out GITHUB_STEP_SUMMARY=$T/gh.sum "$NS" run "$T/m.yaml" >"$T/out" 2>"$T/errgha" & RUNPID=$!
waitfor 60 grep -q "step 1: shell" "$T/errgha"
expect_eq "Actions: the group opened while the job runs" "::group::nightshift job j" "$(grep -m1 '^::group::' "$T/errgha")"
expect_nogrep "Actions: no workflow command from the model's arguments" "^::warning" "$T/errgha"
touch "$T/go2"
wait $RUNPID; RUNPID=
expect_eq "Actions: one group, closed" "1 1" "$(grep -c '^::group::' "$T/errgha") $(grep -c '^::endgroup::' "$T/errgha")"
expect_grep "Actions: the end line inside the group" "job j: succeeded" "$T/errgha"

# --- the new keys are checked ---
cat > "$T/v.yaml" <<'YAML'
version: 1
workspace: ws
models: { d: { provider: openai, model: m, base_url: "http://127.0.0.1:1/v1", idle_timeout: 500ms, retry_for: 25h } }
workers: { w: { instructions: x, model: d, max_text_turns: 0 } }
jobs: { j: { worker: w } }
YAML
"$NS" validate "$T/v.yaml" >/dev/null 2>"$T/verr"
expect_rc "validate: bad idle_timeout, retry_for, max_text_turns" 2 $?
expect_eq "validate: each said at its place" "3" "$(grep -cE 'v.yaml:[34]:[0-9]+: (idle_timeout must be at least 1s|retry_for must be at most 24h|0 is out of range)' "$T/verr")"

done_tests
