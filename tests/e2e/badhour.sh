#!/usr/bin/env bash
# badhour: a team's night (a scan whose output makes a matrix of fixes, and a summary of them)
# meets a bad hour at its model provider (tests/badhour.py: 429s with every kind of retry-after,
# 5xx and 529, resets and clean closes mid-stream, keep-alives only, an error in a 200, a slow
# body, a pause, duplicated events, no usage), on OpenAI's and Anthropic's wire: the night outlasts
# it when retry_for allows and gives up saying why when it does not, a cut stream is never acted
# on, budgets are charged once for each answer and never lose one, the progress lines, --events
# and run.json tell the same retries, and a runner killed mid-request leaves a run that audit
# accepts and --resume finishes without redoing what was done.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { skip "badhour" "python3 is needed for the model server"; done_tests; exit; }
command -v jq >/dev/null || { skip "badhour" "jq is needed to read --events"; done_tests; exit; }

MOCKPID=
RUNPID=
trap '[ -n "$MOCKPID" ] && kill $MOCKPID 2>/dev/null; [ -n "$RUNPID" ] && kill -9 $RUNPID 2>/dev/null; [ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"' EXIT
export BADHOUR_KEY=badhour-key-$$-$RANDOM

# serve PROVIDER FAULTS [REPEAT]: the provider afresh; sets PORT, LOG and writes $T/m.yaml
serve() {
	[ -n "$MOCKPID" ] && { kill $MOCKPID 2>/dev/null; wait $MOCKPID 2>/dev/null; }
	cat > "$T/config.json" <<JSON
{"faults": $2, "repeat": ${3:-false}, "replies": {
 "SCAN-": [{"calls": [["shell", {"command": "echo scan >> scan.txt"}]]}, {"calls": [["final_result", {"repos": ["a", "b", "c", "d", "e", "f", "g", "h"]}]]}],
 "FIX-": [{"calls": [["shell", {"command": "echo fix >> fixes.txt"}]]}, {"calls": [["final_result", {"ok": true}]]}],
 "SUM-": [{"calls": [["final_result", {"ok": true}]]}]}}
JSON
	LOG=$T/model.log; : > "$LOG"
	rm -f "$T/port"
	python3 "$ROOT/tests/badhour.py" "$T/config.json" "$T/port" "$LOG" & MOCKPID=$!
	waitfor 60 test -s "$T/port"
	PORT=$(cat "$T/port")
	local base="http://127.0.0.1:$PORT/v1"
	[ "$1" = anthropic ] && base="http://127.0.0.1:$PORT"
	rm -rf "$T/ws"; mkdir -p "$T/ws"
	cat > "$T/m.yaml" <<YAML
version: 1
workspace: ws
models:
  d: { provider: $1, base_url: "$base", model: m-badhour, api_key_env: BADHOUR_KEY,
       price: { input: 1, output: 2 }, max_output_tokens: 1000,
       retry_for: ${RETRY_FOR:-60s}, timeout: ${TIMEOUT:-4s}${MODELKEYS:-, idle_timeout: 2s} }
budget: { cost: 1 }
workers:
  scanner:
    model: d
    instructions: Scan.
    tools: [shell]
    approval: { default: allow }
    output: { type: object, required: [repos], properties: { repos: { type: array, items: { type: string } } } }
  fixer:
    model: d
    instructions: Fix.
    tools: [shell]
    approval: { default: allow }
    output: { type: object, required: [ok], properties: { ok: { type: boolean } } }
  summ:
    model: d
    instructions: Sum.
    output: { type: object, required: [ok], properties: { ok: { type: boolean } } }
jobs:
  scan: { worker: scanner, input: "SCAN-" }
  fix: { worker: fixer, needs: [scan], matrix: { repo: "\${{ jobs.scan.output.repos }}" }, input: "FIX- \${{ matrix.repo }}" }
  sum: { worker: summ, needs: [fix], input: "SUM- \${{ jobs.fix.outputs }}" }
YAML
}

lines() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }
atleast() { [ "$(lines "$2")" -ge "$1" ]; }  # atleast N FILE: FILE has N lines or more

# --- the bad hour outlasted: every fault once, each before a good answer (19 turns, 18 faults) --
# A fault that is a failed attempt is retried; a good answer that only looks odd (paused, slow,
# duplicated events, no usage) is taken as it is.
RETRYABLE=('{"status":429,"retry_after":"1"}' '{"status":429,"retry_after_ms":"200"}'
	'{"status":429,"retry_after":"Wed, 21 Oct 2015 07:28:00 GMT"}' '{"status":429,"retry_after":"99999"}'
	'{"status":429,"retry_after":"-5"}' '{"status":500}' '{"status":502}' '{"status":503,"retry_after":"1"}'
	'{"status":529}' '{"reset":2}' '{"cut":1}' '{"cut":2}' '{"error200":true}' '{"keepalive":true}')
ODD=('{"pause":1}' '{"slow":1}' '{"dup":true}' '{"nousage":true}')
for prov in openai anthropic; do
	faults=$(IFS=,; echo "${ODD[*]}"; for f in "${RETRYABLE[@]}"; do printf ',%s,{"ok":true}' "$f"; done)
	serve $prov "[$faults]"
	"$NS" run "$T/m.yaml" --out "$T/runs" --events "$T/ev.jsonl" >"$T/out" 2>"$T/err"; rc=$?
	dir=$(cat "$T/out")
	expect_rc "$prov: the night outlasts the bad hour" 0 "$rc"
	[ "$rc" = 0 ] || tail -5 "$T/err"
	expect_eq "$prov: the night was long enough to meet every fault" "true" \
		"$(jq -s --argjson k "$(jq '.faults | length' "$T/config.json")" 'length >= $k' "$LOG")"
	expect_eq "$prov: every job succeeded" "10 succeeded" \
		"$(jq -r '[.jobs[] | .status] | "\(length) \(unique | join(" "))"' "$dir/run.json")"
	expect_eq "$prov: each tool call ran once (none from a cut stream, none twice)" "1 8" \
		"$(lines "$T/ws/scan.txt") $(lines "$T/ws/fixes.txt")"
	nret=${#RETRYABLE[@]}
	expect_eq "$prov: every failed attempt is a model_retry event" "$nret" \
		"$(jq -s '[.[] | select(.type == "model_retry")] | length' "$T/ev.jsonl")"
	expect_eq "$prov: ... and a progress line" "$nret" "$(grep -c 'attempt [0-9]* failed' "$T/err")"
	expect_eq "$prov: ... and counted in run.json" "$nret" "$(jq '[.jobs[] | .model_retries // 0] | add' "$dir/run.json")"
	expect_eq "$prov: a cut stream is a failed attempt, named" "2" \
		"$(jq -s '[.[] | select(.type == "model_retry" and (.error | test("stream ended before")))] | length' "$T/ev.jsonl")"
	expect_eq "$prov: one model_response per answer used (19 turns), retries inside them" "19" \
		"$(jq -s '[.[] | select(.type == "model_response")] | length' "$T/ev.jsonl")"
	expect_eq "$prov: every request after an error in a 200 still streams" "true" \
		"$(jq -s 'all(.[]; .stream)' "$LOG")"
	# Charged once per answer: the run's cost is its jobs', each job's is the usage its answers
	# reported, each once; an answer that reported none is charged to the budgets what it
	# reserved, and its event and its progress line say so.
	expect_eq "$prov: the run's cost is the sum of its jobs'" "true" \
		"$(jq '((.cost - ([.jobs[] | .cost] | add)) | fabs) < 1e-9' "$dir/run.json")"
	expect_eq "$prov: each job's cost is its answers' usage, each once" "true" \
		"$(jq -s --slurpfile r "$dir/run.json" '
			[.[] | select(.type == "model_response")] | group_by(.job)
			| map({job: .[0].job, c: (map(.usage | (.input * 1 + .output * 2) / 1e6) | add)})
			| all(.[]; ((.c - $r[0].jobs[.job].cost) | fabs) < 1e-9)' "$T/ev.jsonl")"
	expect_eq "$prov: an answer without usage is charged what it reserved, and says so" "1 1000" \
		"$(jq -s '[.[] | select(.type == "model_response" and .usage.input == 0)] | "\(length) \(map(.charged.output) | join(" "))"' "$T/ev.jsonl" | tr -d '"')"
	expect_eq "$prov: ... only that one" "1" "$(jq -s '[.[] | select(.type == "model_response" and .charged)] | length' "$T/ev.jsonl")"
	expect_grep "$prov: ... in its progress line" "turn [0-9]+: 0 in / 0 out tokens \(no usage reported: [0-9]+ in / 1000 out charged to the budgets\)" "$T/err"
	"$NS" audit "$dir" --verify >"$T/audit" 2>&1; rc=$?
	expect_rc "$prov: the run verifies" 0 "$rc"
done

# --- the heartbeat while a retry waits says so, then that the model is asked again -------------
serve openai '[{"status":429,"retry_after":"3"},{"pause":1.5}]'
NIGHTSHIFT_HEARTBEAT=1 "$NS" run "$T/m.yaml" --out "$T/runs" >"$T/out" 2>"$T/err"; rc=$?
expect_rc "heartbeat: the night succeeds" 0 "$rc"
expect_grep "heartbeat: during the wait, the wait" "job scan: still turn 1: waiting 3.0s to retry \(attempt 1 failed\)" "$T/err"
expect_grep "heartbeat: then the second attempt" "job scan: still turn 1: waiting for the model \(attempt 2\)" "$T/err"

# --- a provider that does not recover: given up in time, saying why ---------------------------
RETRY_FOR=3s serve openai '[{"status":503}]' true
"$NS" run "$T/m.yaml" --out "$T/runs" --events "$T/ev.jsonl" >"$T/out" 2>"$T/err"; rc=$?
dir=$(cat "$T/out")
expect_rc "never recovers: the night fails" 1 "$rc"
expect_grep "never recovers: the reason names retry_for" "job scan: failed: .*HTTP 503.*gave up after [0-9]+ attempts in [0-9]+s: retry_for 3s" "$T/err"
expect_eq "never recovers: the jobs after it are skipped" "failed skipped skipped" \
	"$(jq -r '[.jobs.scan.status, .jobs.fix.status, .jobs.sum.status] | join(" ")' "$dir/run.json")"
RETRY_FOR=2s serve openai '[{"status":429,"retry_after":"99999"}]' true
"$NS" run "$T/m.yaml" --out "$T/runs" >"$T/out" 2>"$T/err"; rc=$?
expect_rc "an absurd retry-after: the night fails within retry_for" 1 "$rc"
expect_grep "an absurd retry-after: the reason says the wait was the backoff's" \
	"job scan: failed: .*the next wait, [0-9.]+s, the backoff's: the server's retry-after \(99999s\) is past 60s, would pass it" "$T/err"
expect_nogrep "an absurd retry-after: ... not the server's" "as the server's retry-after asked" "$T/err"
MODELKEYS=", retries: 2, idle_timeout: 2s" serve anthropic '[{"status":529}]' true
"$NS" run "$T/m.yaml" --out "$T/runs" >"$T/out" 2>"$T/err"; rc=$?
expect_rc "retries: 2: the night fails" 1 "$rc"
expect_eq "retries: 2: three requests, no more" 3 "$(lines "$LOG")"
expect_grep "retries: 2: the reason says so" "job scan: failed: .*HTTP 529.*gave up after 3 attempts" "$T/err"

# --- the runner killed mid-request (kill -9), then finalized and resumed --------------------------
# scan (requests 0, 1) and fix-a (2, 3) are done; fix-b's first request gets no answer until the
# test says so (idle_timeout: 60s, so that it stays the one in flight). The killed run is INCOMPLETE to audit until finalize seals it; --resume then
# carries scan and fix-a (the matrix member, by its values) and runs the rest, each call once.
TIMEOUT=90s MODELKEYS=", idle_timeout: 60s" serve openai "[{\"ok\":true},{\"ok\":true},{\"ok\":true},{\"ok\":true},{\"wait\":\"$T/go\"}]"
rm -f "$T/go"
"$NS" run "$T/m.yaml" --out "$T/runs" >"$T/out" 2>"$T/err" & RUNPID=$!
waitfor 60 atleast 5 "$LOG"
kill -9 $RUNPID; wait $RUNPID 2>/dev/null; RUNPID=
dir=$(cat "$T/out")
"$NS" audit "$dir" --verify >"$T/audit" 2>&1; rc=$?
expect_rc "kill -9 mid-request: audit says INCOMPLETE" 4 "$rc"
expect_grep "kill -9 mid-request: ... and that what it wrote checks out" "INCOMPLETE: the run was not sealed; what it wrote checks out" "$T/audit"
"$NS" finalize "$dir" 2>"$T/fin"; rc=$?
expect_rc "kill -9 mid-request: finalize seals it" 0 "$rc"
"$NS" audit "$dir" --verify >"$T/audit" 2>&1; rc=$?
expect_rc "kill -9 mid-request: the sealed run verifies" 0 "$rc"
expect_eq "kill -9 mid-request: a member's entry still says its matrix" "fix a" \
	"$(jq -r '.jobs["fix-a"].matrix | "\(.job) \(.values.repo)"' "$dir/run.json")"
touch "$T/go"
"$NS" run "$T/m.yaml" --resume "$dir" --out "$T/runs" >"$T/out2" 2>"$T/err2"; rc=$?
expect_rc "kill -9 mid-request: --resume finishes the night" 0 "$rc"
[ "$rc" = 0 ] || tail -3 "$T/err2"
expect_grep "kill -9 mid-request: scan carried over" "job scan: carried over" "$T/err2"
expect_grep "kill -9 mid-request: fix-a carried over" "job fix-a: carried over: it succeeded in .* with the same input" "$T/err2"
expect_eq "kill -9 mid-request: nothing done was redone, nothing written lost" "1 8" \
	"$(lines "$T/ws/scan.txt") $(lines "$T/ws/fixes.txt")"
"$NS" audit "$(cat "$T/out2")" --verify >"$T/audit" 2>&1; rc=$?
expect_rc "kill -9 mid-request: the resumed run verifies" 0 "$rc"

# --- SIGTERM while it waits out a retry-after: cancelled at once, sealed, resumable ---------------
serve anthropic '[{"ok":true},{"ok":true},{"status":429,"retry_after":"50"}]'
"$NS" run "$T/m.yaml" --out "$T/runs" --events "$T/ev.jsonl" >"$T/out" 2>"$T/err" & RUNPID=$!
waitfor 60 grep -q "job fix-a: turn 1: attempt 1 failed: HTTP 429.*retrying in 50.0s" "$T/err"
kill -TERM $RUNPID
waitfor 40 notrunning "$T/m.yaml"
wait $RUNPID; rc=$?; RUNPID=
expect_rc "SIGTERM in a retry wait: exit 130" 130 "$rc"
dir=$(cat "$T/out")
expect_eq "SIGTERM in a retry wait: the retry was told before it" "1" \
	"$(jq -s '[.[] | select(.type == "model_retry" and .wait_ms == 50000)] | length' "$T/ev.jsonl")"
expect_eq "SIGTERM in a retry wait: sealed, cancelled" "cancelled true" "$(jq -s -r '.[-1] | "\(.status) \(.sealed)"' "$T/ev.jsonl")"
"$NS" audit "$dir" --verify >"$T/audit" 2>&1; rc=$?
expect_rc "SIGTERM in a retry wait: the run verifies" 0 "$rc"
"$NS" run "$T/m.yaml" --resume "$dir" --out "$T/runs" >"$T/out2" 2>"$T/err2"; rc=$?
expect_rc "SIGTERM in a retry wait: --resume finishes the night" 0 "$rc"
expect_eq "SIGTERM in a retry wait: each call once" "1 8" "$(lines "$T/ws/scan.txt") $(lines "$T/ws/fixes.txt")"

done_tests
