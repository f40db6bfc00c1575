#!/usr/bin/env bash
# outlinks: what a command writes beside a stranger's run (report's RUN.html and its temporary,
# export's file, finalize's sealed log, run --events) is a new file renamed into place. A link
# planted at the final name or at the temporary's is replaced, never written through: the file
# it points to is unchanged. A pipe or device the user names (/dev/null) is written as it is.
source "$(dirname "$0")/lib.sh"

mkdir -p "$T/ws"
cat >"$T/m.yaml" <<'YAML'
version: 1
workspace: ws
sandbox: { backend: none }
models:
  d: { provider: scripted, replies: [ {tool_calls: [ {name: shell, arguments: {command: "echo hi > a.txt"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: d, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
run=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err")
expect_rc "a run" 0 $?

# The victims: the user's files, outside the bundle.
victims() { for v in a b c d e f; do echo "VICTIM-$v-$$" >"$T/victim-$v"; done; }
unchanged() {  # unchanged NAME: every victim holds what it held
	local v
	for v in a b c d e f; do
		expect_eq "$1: victim-$v unchanged" "VICTIM-$v-$$" "$(cat "$T/victim-$v")"
	done
}
# A regular file, not a link, holding PATTERN.
isfile() { [ -f "$2" ] && [ ! -L "$2" ] && grep -Eq -- "$1" "$2"; }
notemp() { [ -z "$(find "$1" -maxdepth 1 -name '.*.tmp.*')" ]; }

# report RUN: the unpacked bundle holds run/, run.html.part and run.html, links to the victims.
victims
mkdir -p "$T/bundle" && cp -a "$run" "$T/bundle/run"
ln -s "$T/victim-a" "$T/bundle/run.html.part"
ln -s "$T/victim-b" "$T/bundle/run.html"
(cd "$T/bundle" && "$NS" report run >"$T/out" 2>"$T/err")
expect_rc "report beside a stranger's links" 0 $?
unchanged "report RUN"
check "report: run.html is the page, the link replaced" isfile '<html' "$T/bundle/run.html"
check "report: no temporary left" notemp "$T/bundle"

# report RUN --out FILE: a link at FILE and at FILE.part.
victims
ln -s "$T/victim-c" "$T/bundle/page.html"
ln -s "$T/victim-d" "$T/bundle/page.html.part"
"$NS" report "$T/bundle/run" --out "$T/bundle/page.html" >"$T/out" 2>"$T/err"
expect_rc "report --out onto a link" 0 $?
unchanged "report --out"
check "report --out: the page in the link's place" isfile '<html' "$T/bundle/page.html"

# export --otlp FILE: a link at FILE.
victims
ln -s "$T/victim-e" "$T/bundle/trace.json"
"$NS" export "$T/bundle/run" --otlp "$T/bundle/trace.json" 2>"$T/err"
expect_rc "export onto a link" 0 $?
unchanged "export --otlp"
check "export: the trace in the link's place" isfile 'resourceSpans' "$T/bundle/trace.json"
check "export: no temporary left" notemp "$T/bundle"

# finalize RUN: an unfinished run (no run.json, its log cut) with a link where the sealed log was
# written before being renamed over the log.
victims
rm -rf "$T/cut" && cp -a "$run" "$T/cut" && rm "$T/cut/run.json"
log="$T/cut/jobs/j/events.jsonl.zst"
truncate -s $(($(stat -c %s "$log") - 5)) "$log"
ln -s "$T/victim-f" "$log.seal"
ln -s "$T/victim-a" "$T/cut/jobs/j/.events.jsonl.zst.tmp.000000000000"
"$NS" finalize "$T/cut" >/dev/null 2>"$T/err"
expect_rc "finalize beside links" 0 $?
unchanged "finalize"
check "finalize: the sealed log is a file of its own" test -f "$log" -a ! -L "$log"
check "finalize: the sealed log reads" bash -c "zstd -dcq '$log' | grep -q job_start"
rm -f "$log.seal"

# run --events PATH: a link at PATH.
victims
ln -s "$T/victim-b" "$T/ev.jsonl"
"$NS" run "$T/m.yaml" --out "$T/runs" --events "$T/ev.jsonl" >/dev/null 2>"$T/err"
expect_rc "run --events onto a link" 0 $?
unchanged "run --events"
check "--events: the events in the link's place" isfile '"run_end"' "$T/ev.jsonl"

# What the user names as a device or pipe is written as it is, never replaced (a device only
# where export writes it: before the fix report renamed its page over what --out named).
"$NS" export "$run" --otlp /dev/null 2>"$T/err"
expect_rc "export --otlp /dev/null" 0 $?
check "/dev/null is still the device" test -c /dev/null
mkfifo "$T/fifo"
for cmd in "export $run --otlp" "report $run --out"; do
	timeout 20 cat "$T/fifo" >"$T/fromfifo" & p=$!  # waits for nothing forever if the fifo is replaced
	timeout 60 "$NS" $cmd "$T/fifo" >/dev/null 2>"$T/err"
	expect_rc "${cmd%% *} into a FIFO" 0 $?
	wait $p
	check "${cmd%% *}: the output came through the pipe" grep -Eq 'resourceSpans|<html' "$T/fromfifo"
	check "${cmd%% *}: the fifo is still one" test -p "$T/fifo"
done

done_tests
