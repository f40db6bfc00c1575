#!/usr/bin/env bash
# context.compact: summarize. A job whose model talks at length every other turn (text no elision
# takes away) outgrows its window: with elide alone it fails naming the window; with summarize the
# oldest turns are summarized by a model call, each a context_compacted event holding the summary,
# and it runs to its end with no request past the window. The summaries' tokens count in the
# job's usage (audit --verify holds job_end to them) and in its budgets; replay applies each
# summary as recorded, with no model; a record whose summary cannot apply is a divergence.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { skip "compact" "python3 is needed for the model server"; done_tests; exit; }
MP=
trap '[ -n "$MP" ] && kill $MP 2>/dev/null; rm -rf "$T"' EXIT
mkdir -p "$T/ws"
echo '{"window": 12000, "roles": {"main": {"turns": 60, "command": "echo hi", "talk": [2, 3000]}}}' > "$T/config.json"
python3 "$ROOT/tests/longmodel.py" "$T/config.json" "$T/port" "$T/log" & MP=$!
waitfor 60 test -s "$T/port"
manifest() {  # manifest COMPACT [MAX_TOKENS]
	cat > "$T/m.yaml" <<YAML
version: 1
workspace: ws
models:
  default: { provider: openai, base_url: "http://127.0.0.1:$(cat "$T/port")/v1", model: mock-long, retries: 0,
             context_window: 12000, max_output_tokens: 1000 }
workers:
  w: { instructions: "ROLE=main", tools: [shell], approval: { default: allow }, max_turns: 200,
       context: { compact: $1 } ${2:+, max_tokens: $2} }
jobs:
  j: { worker: w }
YAML
}
q() { python3 - "$T/log" "$T/ev.jsonl" "$dir/run.json" "$1" <<'PY'
import json, sys
log = [json.loads(l) for l in open(sys.argv[1])]
ev = [json.loads(l) for l in open(sys.argv[2])]
run = json.load(open(sys.argv[3]))
cc = [e for e in ev if e["type"] == "context_compacted"]
resp = [e for e in ev if e["type"] == "model_response"]
print(eval(sys.argv[4]))
PY
}

manifest elide
: > "$T/log"
dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "elide alone: the talk outgrows the window, the job fails" 1 "$rc"
expect_grep "elide alone: the failure names the window" "do not fit the model's context window \\(12000 tokens" "$T/err"

manifest summarize
: > "$T/log"
dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "summarize: the job runs to its end" 0 "$rc"
zstd -dcq "$dir/jobs/j/events.jsonl.zst" > "$T/ev.jsonl"
expect_eq "no request passed the window, none was refused" "True" "$(q 'all(r["status"] == 200 and r["tokens"] + r["cap"] <= 12000 for r in log)')"
expect_eq "the model was asked for summaries, each a context_compacted event" "True" "$(q 'len(cc) >= 2 and len(cc) == sum(1 for r in log if r.get("summary"))')"
expect_eq "each event holds its summary, what it stands for and the call's usage" "True" "$(q 'all(e["summary"].startswith("summary of turns before") and e["first"] == 1 and e["count"] >= 2 and e["usage"]["input"] > 0 for e in cc)')"
expect_eq "the job's usage counts the summaries' calls" "True" "$(q 'run["jobs"]["j"]["usage"]["input"] == sum(e["usage"]["input"] for e in resp + cc) and sum(e["usage"]["input"] for e in cc) > 0')"
expect_eq "the summary reached the model in place of the turns it stands for" "True" "$(q 'len(log) > 80 and max(r["tokens"] for r in log) < 12000')"
expect_grep "progress says so" "context: summarizing [0-9]* older messages to fit the window" "$T/err"
check "the run verifies" "$NS" audit "$dir" --verify

"$NS" report "$dir" --out "$T/report.html" 2>/dev/null
expect_grep "report: each summary a line of the timeline, the summary behind it" "context: [0-9]+ older messages summarized by the model" "$T/report.html"

# replay, with no model: the record's summaries applied as they are
kill $MP; wait $MP 2>/dev/null; MP=
new=$("$NS" replay "$dir" --out "$T/replays" 2>"$T/rerr"); rc=$?
expect_rc "replay with no server: every request matches the record, summaries included" 0 "$rc"
expect_grep "replay: the record's summaries replaced the turns" "older messages replaced by the record's summary" "$T/rerr"
check "the replay verifies" "$NS" audit "$new" --verify
expect_eq "the replay's summaries are the night's" "$(zstd -dcq "$dir/jobs/j/events.jsonl.zst" | grep -c '"type":"context_compacted"')" \
	"$(zstd -dcq "$new/jobs/j/events.jsonl.zst" | grep '"type":"context_compacted"' | grep -c '"replayed":true')"

# crafted records: each one a copy of the night's, its first context_compacted changed by CODE
# (python on the list ev and the first event's index i), the hash chain sealed again
craft() {  # craft DIR CODE
	rm -rf "$1"; cp -r "$dir" "$1"
	python3 - "$1" "$2" <<'PY'
import hashlib, json, subprocess, sys
p = sys.argv[1] + "/jobs/j/events.jsonl.zst"
ev = [json.loads(l) for l in subprocess.run(["zstd", "-dcq", p], capture_output=True, check=True).stdout.decode().splitlines()]
i = next(k for k, e in enumerate(ev) if e["type"] == "context_compacted")
exec(sys.argv[2])
text, last = [], None
for e in ev:
    if last is not None:
        e["prev"] = last
    l = json.dumps(e, separators=(",", ":"))
    text.append(l)
    last = hashlib.sha256(l.encode()).hexdigest()
subprocess.run(["zstd", "-qf", "-o", p], input=("\n".join(text) + "\n").encode(), check=True)
PY
}
# a record whose summary stands for messages the conversation does not hold: a divergence
craft "$T/bad" 'ev[i]["count"] = 100000'
"$NS" replay "$T/bad" --out "$T/replays" >/dev/null 2>"$T/rerr"; rc=$?
expect_rc "a summary that cannot apply: replay diverges" 4 "$rc"
expect_grep "the divergence names the event" "context_compacted cannot be applied" "$T/rerr"
# numbers that wrap: first + count past INT_MAX once made a range that "fitted" (a crash)
for v in 2147483647 1e12 2.5 1 -3 '"2"'; do
	craft "$T/bad" "ev[i][\"count\"] = $v"
	"$NS" replay "$T/bad" --out "$T/replays" >/dev/null 2>"$T/rerr"; rc=$?
	expect_rc "a count of $v: replay diverges, no crash" 4 "$rc"
done
craft "$T/bad" 'ev[i]["first"] = 2147483647'
"$NS" replay "$T/bad" --out "$T/replays" >/dev/null 2>"$T/rerr"; rc=$?
expect_rc "a first of INT_MAX: replay diverges, no crash" 4 "$rc"
# the night asks for three summaries a turn at most: a record with four for one turn is not its
craft "$T/bad" 'ev[i]["count"] = 2; ev[i:i+1] = [dict(ev[i]) for _ in range(4)]'
"$NS" replay "$T/bad" --out "$T/replays" >/dev/null 2>"$T/rerr"; rc=$?
expect_rc "four summaries in one turn: replay diverges" 4 "$rc"
expect_grep "the divergence says so" "more than 3 times in one turn" "$T/rerr"

# budgets: a max_tokens the summaries' calls pass stops the job before a turn it cannot pay
python3 "$ROOT/tests/longmodel.py" "$T/config.json" "$T/port2" "$T/log" & MP=$!
waitfor 60 test -s "$T/port2"
cp "$T/port2" "$T/port"
manifest summarize 60000
dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "a budget the job with its summaries passes: the job fails" 1 "$rc"
expect_grep "the budget is named" "max_tokens" "$T/err"
check "the run verifies" "$NS" audit "$dir" --verify
kill $MP; wait $MP 2>/dev/null; MP=
# a max_tokens that the first summary's call makes the job pass two turns after it: the replay
# charges the record's summary to the budget too, and stops at the turn the night stopped. With a
# server whose summaries report no usage, the night charged the call's estimate and cap ("charged")
stopsafter() {  # stopsafter LABEL CONFIG
	echo "$2" > "$T/c2.json"
	rm -f "$T/port3"
	python3 "$ROOT/tests/longmodel.py" "$T/c2.json" "$T/port3" "$T/log" & MP=$!
	waitfor 60 test -s "$T/port3"
	cp "$T/port3" "$T/port"
	manifest summarize
	local all; all=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err")
	max=$(zstd -dcq "$all/jobs/j/events.jsonl.zst" | python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin]
t = next(e["turn"] for e in ev if e["type"] == "context_compacted")
tot = 0
for e in ev:
    if e["type"] in ("model_response", "context_compacted") and "usage" in e:
        u = e.get("charged", e["usage"])
        tot += u["input"] + u["output"]
    if e["type"] == "model_response" and e["turn"] == t + 2:
        break
print(tot + 3000)')
	manifest summarize "$max"
	dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
	expect_rc "$1: max_tokens after a summary: the job fails" 1 "$rc"
	stop=$(grep -o "turn [0-9]* not sent: max_tokens" "$T/err" | head -1)
	expect_eq "$1: it stops for the budget after a summary" "1" \
		"$([ -n "$stop" ] && zstd -dcq "$dir/jobs/j/events.jsonl.zst" | grep -q context_compacted && echo 1)"
	kill $MP; wait $MP 2>/dev/null; MP=
	"$NS" replay "$dir" --out "$T/replays" >/dev/null 2>"$T/rerr"; rc=$?
	expect_rc "$1: its replay matches" 0 "$rc"
	expect_grep "$1: the replay stops where the night did, for the budget (${stop:-?})" "${stop:-no stop}" "$T/rerr"
}
stopsafter "usage reported" "$(cat "$T/config.json")"
stopsafter "no usage reported" '{"window": 12000, "summary_usage": false, "roles": {"main": {"turns": 60, "command": "echo hi", "talk": [2, 3000]}}}'
expect_eq "no usage reported: the event says what the budgets were charged" "True" \
	"$(zstd -dcq "$dir/jobs/j/events.jsonl.zst" | python3 -c '
import json, sys
cc = [e for e in map(json.loads, sys.stdin) if e["type"] == "context_compacted"]
print(all(e["usage"]["input"] == 0 and e["charged"]["input"] > 0 and e["charged"]["output"] == 1000 for e in cc))')"
# a night whose summary call failed: the replay fails there as recorded, no divergence
echo '{"window": 12000, "summary_status": 400, "roles": {"main": {"turns": 60, "command": "echo hi", "talk": [2, 3000]}}}' > "$T/c3.json"
rm -f "$T/port3"
python3 "$ROOT/tests/longmodel.py" "$T/c3.json" "$T/port3" "$T/log" & MP=$!
waitfor 60 test -s "$T/port3"
cp "$T/port3" "$T/port"
manifest summarize
dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "a summary call refused: the job fails" 1 "$rc"
expect_grep "it fails compacting the context" "not sent: compacting the context: .*400" "$T/err"
kill $MP; wait $MP 2>/dev/null; MP=
new=$("$NS" replay "$dir" --out "$T/replays" 2>"$T/rerr"); rc=$?
expect_rc "its replay matches" 0 "$rc"
expect_grep "the replay fails there too, as recorded" "not sent: compacting the context: .*400.*(as recorded)" "$T/rerr"
expect_nogrep "no divergence is claimed" "replay diverged" "$T/rerr"
check "the replay verifies" "$NS" audit "$new" --verify
done_tests
