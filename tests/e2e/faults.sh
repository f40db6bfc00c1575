#!/usr/bin/env bash
# Fault injection: a full disk under --out, the workspace removed mid-run, snapshot writes
# failing, the model server dying mid-request or cutting its reply, SIGTERM, and SIGKILL of the
# runner at random moments (KILLS times, 50 by default). Each must end with a clear error, the
# right exit code, and a run directory that `audit --verify` accepts (INCOMPLETE where the run
# was killed before sealing), or, where a layer could not be written, says INCOMPLETE with exit 4
# and names it. Tampered numbers in a run must not crash audit.
source "$(dirname "$0")/lib.sh"
KILLS=${KILLS:-50}
MOCKPID=
MOUNTED=
cleanup() {
	[ -n "$MOCKPID" ] && kill -9 "$MOCKPID" 2>/dev/null
	[ -n "$MOUNTED" ] && umount "$MOUNTED" 2>/dev/null
	if [ -n "${KEEP:-}" ]; then echo "kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT

# unsealedok OUT RC: audit --verify's verdict on a run that was not sealed: exit 4, INCOMPLETE,
# everything it wrote checking out.
unsealedok() { [ "$2" = 4 ] && grep -q 'INCOMPLETE: the run was not sealed; what it wrote checks out' <<<"$1"; }
# verified NAME DIR [complete|incomplete|any]: audit --verify accepts DIR: exit 0 when it is
# sealed, exit 4 saying INCOMPLETE with nothing failed when it is not; marked as said.
verified() {
	local out rc
	out=$("$NS" audit "$2" --verify 2>&1); rc=$?
	if [ "$rc" = 0 ] || unsealedok "$out" "$rc"; then
		expect_rc "$1: audit --verify accepts the run" 0 0
	else
		expect_rc "$1: audit --verify accepts the run" 0 "$rc"
		printf '%s\n' "$out" | head -n 20
	fi
	case ${3:-any} in
	complete) expect_rc "$1: the run is sealed (exit 0, not INCOMPLETE)" 0 "$rc" ;;
	incomplete) expect_grep "$1: the run is marked INCOMPLETE" INCOMPLETE <(printf '%s\n' "$out") ;;
	esac
	[ "$rc" = 0 ] || unsealedok "$out" "$rc"
}
# gapped NAME DIR [PATTERN]: every digest and chain of the sealed run DIR checks out, but a layer
# failed or is missing: audit --verify says INCOMPLETE (not verified) and exits 4, naming it.
gapped() {
	local out rc
	out=$("$NS" audit "$2" --verify 2>&1); rc=$?
	expect_rc "$1: audit --verify exits 4 (the workspace's history has a hole)" 4 "$rc"
	expect_grep "$1: and says INCOMPLETE" ': INCOMPLETE: ' <(printf '%s\n' "$out")
	expect_nogrep "$1: nothing else failed" 'FAILED|verified' <(printf '%s\n' "$out")
	[ -z "${3:-}" ] || expect_grep "$1: the hole is named" "$3" <(printf '%s\n' "$out")
}

# The namespace sandbox where it works here, else none (the faults are the runner's, not the
# sandbox's).
mkdir -p "$T/probe/ws"
cat >"$T/probe/m.yaml" <<'YAML'
version: 1
workspace: ws
models: { d: { provider: scripted, replies: [ { tool_calls: [ { name: shell, arguments: { command: "echo ok" } } ] }, { tool_calls: [ { name: final_result, arguments: {} } ] } ] } }
workers: { w: { model: d, instructions: x, tools: [shell], approval: { default: allow } } }
jobs: { j: { worker: w } }
YAML
BACKEND=namespace
if ! "$NS" run "$T/probe/m.yaml" --out "$T/probe/runs" >/dev/null 2>"$T/probe/err"; then
	BACKEND=none
	echo "note: the namespace sandbox does not work here ($(tail -n1 "$T/probe/err")); using backend none"
fi

# job DIR STEPS [BIG]: DIR/m.yaml, two jobs (b needs a) of STEPS steps each on the scripted
# model, alternating a shell step and a write_file step (BIG: the even steps are shell steps
# that each write 64 KiB of random bytes instead); DIR/ws is the workspace. Step 1 of each job
# touches ws/started.
job() {
	local dir=$1 steps=$2 big=${3:-}
	rm -rf "$dir" && mkdir -p "$dir/ws"
	for i in 1 2 3; do echo "file $i" >"$dir/ws/f$i.txt"; done
	python3 - "$dir" "$steps" "$big" "$BACKEND" <<'PY'
import json, os, sys
d, steps, big, backend = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def replies():
    r = [{"tool_calls": [{"name": "shell", "arguments": {"command": "touch started"}}]}]
    for i in range(2, steps + 1):
        if i % 2:
            r.append({"tool_calls": [{"name": "shell", "arguments": {"command": f"echo step {i} >> log.txt"}}]})
        elif big:
            r.append({"tool_calls": [{"name": "shell", "arguments": {"command": f"head -c 65536 /dev/urandom > big{i}.bin"}}]})
        else:
            r.append({"tool_calls": [{"name": "write_file", "arguments": {"path": f"out/f{i}.txt", "content": "x" * (100 * i)}}]})
    r.append({"tool_calls": [{"name": "final_result", "arguments": {"n": steps}}]})
    return r
m = {"version": 1, "name": "faults", "workspace": "ws",
     "sandbox": {"backend": backend, "timeout": "20s"},
     "models": {"dry": {"provider": "scripted", "replies": replies()}},
     "workers": {"w": {"instructions": "x", "model": "dry", "tools": ["shell", "write_file"], "max_turns": steps + 5,
                       "approval": {"default": "deny", "rules": [
                           {"tool": "shell", "command": "echo *", "decision": "allow"},
                           {"tool": "shell", "command": "touch *", "decision": "allow"},
                           {"tool": "shell", "command": "sleep *", "decision": "allow"},
                           {"tool": "shell", "command": "head -c 65536 /dev/urandom", "decision": "allow"},
                           {"tool": "write_file", "path": "out/**", "decision": "allow"}]},
                       "output": {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}}},
     "jobs": {"a": {"worker": "w", "input": "go"}, "b": {"worker": "w", "needs": ["a"], "input": "again ${{ jobs.a.output.n }}"}}}
open(os.path.join(d, "m.yaml"), "w").write(json.dumps(m, indent=1))
PY
}

# insertstep DIR COMMAND: a shell step of COMMAND right after the first step of each job.
insertstep() {
	python3 - "$1/m.yaml" "$2" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["models"]["dry"]["replies"].insert(1, {"tool_calls": [{"name": "shell", "arguments": {"command": sys.argv[2]}}]})
json.dump(m, open(sys.argv[1], "w"))
PY
}

# ---- disk full: --out on a small tmpfs, filled at different points of the run ----
mnt=$T/full
mkdir -p "$mnt"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=64k tmpfs "$mnt" 2>/dev/null; then
	MOUNTED=$mnt
	job "$T/df" 12 big
	# Where it fills (as measured here): 8k run.json (INCOMPLETE), 24k layer 0003, 256k layer 0007,
	# 600k the first layer of job b.
	for size in 8k 24k 256k 600k; do
		mount -o remount,size=$size "$mnt" && rm -rf "${mnt:?}"/*
		dir=$("$NS" run "$T/df/m.yaml" --out "$mnt" 2>"$T/df/err"); rc=$?
		expect_rc "disk full at $size: exit 1" 1 "$rc"
		expect_grep "disk full at $size: the error says so" "No space left on device" "$T/df/err"
		check "disk full at $size: run directory printed" test -d "$dir"
		# A run the disk stopped before sealing verifies as INCOMPLETE; one sealed with a layer
		# that could not be written says INCOMPLETE with exit 4.
		vout=$("$NS" audit "$dir" --verify 2>&1); vrc=$?
		if [ -d "$dir" ] && ! [ -s "$dir/run.json" ] || [ "$vrc" = 0 ] || unsealedok "$vout" "$vrc"; then
			verified "disk full at $size" "$dir"
		elif [ -d "$dir" ]; then
			gapped "disk full at $size" "$dir" 'snapshot before step'
		fi
	done
	umount "$mnt" && MOUNTED=
else
	skip "disk full" "needs root to mount a small tmpfs"
fi

# ---- the workspace removed while a step runs ----
job "$T/ws" 6
insertstep "$T/ws" "sleep 1"
"$NS" run "$T/ws/m.yaml" --out "$T/ws/runs" >"$T/ws/out" 2>"$T/ws/err" &
pid=$!
waitfor 60 test -e "$T/ws/ws/started"
rm -rf "$T/ws/ws"
wait $pid; rc=$?
expect_rc "workspace removed: exit 1" 1 "$rc"
expect_grep "workspace removed: the error names the workspace" "ws.*(No such file|not found|missing|vanished)|workspace" "$T/ws/err"
dir=$(cat "$T/ws/out")
check "workspace removed: run directory printed" test -d "$dir"
[ -d "$dir" ] && gapped "workspace removed" "$dir" 'end\.tar\.zst: missing|snapshot before step'

# ---- a snapshot layer that cannot be written ----
cc -shared -fPIC -o "$T/faultfs.so" "$ROOT/tests/fixtures/faultfs.c" -ldl 2>"$T/cc.err" || cat "$T/cc.err"
if [ -f "$T/faultfs.so" ]; then
	job "$T/sw" 6
	for layer in 0001 0004; do
		for errno_ in ENOSPC EIO; do
			dir=$(ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 LD_PRELOAD="$T/faultfs.so" \
				NS_FAULT_PATH="/.$layer.tar.zst" NS_FAULT_AFTER=100 NS_FAULT_ERRNO=$errno_ \
				"$NS" run "$T/sw/m.yaml" --out "$T/sw/runs" 2>"$T/sw/err"); rc=$?
			expect_rc "layer $layer fails ($errno_): exit 1" 1 "$rc"
			msg="No space left on device"; [ $errno_ = EIO ] && msg="Input/output error"
			expect_grep "layer $layer fails ($errno_): the error names the layer and the cause" "$layer.*$msg|$msg.*$layer" "$T/sw/err"
			check "layer $layer fails ($errno_): run directory printed" test -d "$dir"
			[ -d "$dir" ] && gapped "layer $layer fails ($errno_)" "$dir" "snapshot before step ${layer#000}: .*$layer"
			check "layer $layer fails ($errno_): no half-written layer left" \
				bash -c "! ls -A '$dir/snapshots' | grep -q tmp"
		done
	done
	# The event log cannot even be started: the job fails saying so, and leaves no log.
	for after in 0 7; do
		dir=$(ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 LD_PRELOAD="$T/faultfs.so" \
			NS_FAULT_PATH="/jobs/a/events.jsonl.zst" NS_FAULT_AFTER=$after \
			"$NS" run "$T/sw/m.yaml" --out "$T/sw/runs" 2>"$T/sw/err"); rc=$?
		expect_rc "event log cannot be started ($after bytes): exit 1" 1 "$rc"
		expect_grep "event log cannot be started ($after bytes): the error says so" "events.jsonl.zst: No space left on device" "$T/sw/err"
		check "event log cannot be started ($after bytes): run directory printed" test -d "$dir"
		[ -d "$dir" ] && verified "event log cannot be started ($after bytes)" "$dir" complete
		check "event log cannot be started ($after bytes): job a failed with the error in run.json" \
			python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"]["a"]; sys.exit(not (j["status"]=="failed" and "No space left" in j.get("error","")))' "$dir/run.json"
		check "event log cannot be started ($after bytes): no half-written log left" test ! -e "$dir/jobs/a/events.jsonl.zst"
	done
	# The event log: a line cut by a failed write is dropped and the log ended after the last
	# whole line, so the sealed run still verifies. The sizes around 3000 put the disk's end
	# inside, and just after, the three bytes that end the frame.
	for after in 300 3000 3001 3002 3003; do
		dir=$(ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 LD_PRELOAD="$T/faultfs.so" \
			NS_FAULT_PATH="/jobs/a/events.jsonl.zst" NS_FAULT_AFTER=$after \
			"$NS" run "$T/sw/m.yaml" --out "$T/sw/runs" 2>"$T/sw/err"); rc=$?
		expect_rc "event log write fails after $after bytes: exit 1" 1 "$rc"
		expect_grep "event log write fails after $after bytes: the error says so" "event log: No space left on device" "$T/sw/err"
		check "event log write fails after $after bytes: run directory printed" test -d "$dir"
		[ -d "$dir" ] && verified "event log write fails after $after bytes" "$dir" complete
		check "event log write fails after $after bytes: stock zstd reads the log" zstd -tq "$dir/jobs/a/events.jsonl.zst"
	done
else
	skip "snapshot and event log writes failing" "cannot build the LD_PRELOAD fault library"
fi

# ---- the model server dies while the runner waits for a reply, or cuts its reply short ----
mock() {  # mock SCRIPT_JSON: starts the server, sets PORT and MOCKLOG
	printf '%s' "$1" >"$T/script.json"
	MOCKLOG=$T/mock.log; : >"$MOCKLOG"; rm -f "$T/port"
	python3 "$ROOT/tests/mockmodel.py" "$T/script.json" "$T/port" "$MOCKLOG" & MOCKPID=$!
	waitfor 60 test -s "$T/port"
	PORT=$(cat "$T/port")
}
mmodel() {  # mmodel: $T/mm/m.yaml against the mock on $PORT
	mkdir -p "$T/mm/ws"
	cat >"$T/mm/m.yaml" <<YAML
version: 1
workspace: ws
sandbox: { backend: $BACKEND }
models:
  default: { provider: openai, base_url: "http://127.0.0.1:$PORT/v1", model: mock-1, api_key_env: MOCK_KEY, retries: 1, timeout: 10s }
workers:
  w: { instructions: x, tools: [shell], approval: { rules: [ { tool: shell, command: "echo *", decision: allow } ] } }
jobs:
  j: { worker: w, input: go }
YAML
}
export MOCK_KEY=sk-test-faults
mock '[{"openai_calls": [["shell", {"command": "echo one"}]]}, {"openai_text": "late", "delay": 30}]'
mmodel
"$NS" run "$T/mm/m.yaml" --out "$T/mm/runs" >"$T/mm/out" 2>"$T/mm/err" &
pid=$!
waitfor 60 eval '[ "$(wc -l <"$MOCKLOG")" -ge 2 ]'
kill -9 "$MOCKPID"; wait "$MOCKPID" 2>/dev/null; MOCKPID=
wait $pid; rc=$?
expect_rc "model server killed mid-request: exit 1" 1 "$rc"
expect_grep "model server killed mid-request: the error says the model failed" "model|connect|server|HTTP" "$T/mm/err"
dir=$(cat "$T/mm/out")
check "model server killed: run directory printed" test -d "$dir"
[ -d "$dir" ] && verified "model server killed" "$dir" complete

mock '[{"openai_calls": [["shell", {"command": "echo one"}]]}, {"openai_text": "cut", "fault": "truncate"}]'
mmodel
dir=$("$NS" run "$T/mm/m.yaml" --out "$T/mm/runs" 2>"$T/mm/err"); rc=$?
kill "$MOCKPID" 2>/dev/null; wait "$MOCKPID" 2>/dev/null; MOCKPID=
expect_rc "reply cut mid-body: exit 1" 1 "$rc"
expect_grep "reply cut mid-body: the error says so" "model|transfer|partial|closed|HTTP" "$T/mm/err"
[ -d "$dir" ] && verified "reply cut mid-body" "$dir" complete

# ---- SIGTERM: stops, seals, exits 130 ----
job "$T/term" 8
insertstep "$T/term" "sleep 5"
"$NS" run "$T/term/m.yaml" --out "$T/term/runs" >"$T/term/out" 2>"$T/term/err" &
pid=$!
waitfor 60 test -e "$T/term/ws/started"
sleep 0.2
kill -TERM $pid
wait $pid; rc=$?
expect_rc "SIGTERM: exit 130" 130 "$rc"
dir=$(cat "$T/term/out")
check "SIGTERM: run directory printed" test -d "$dir"
[ -d "$dir" ] && verified "SIGTERM" "$dir" complete

# ---- SIGKILL at random moments ----
# The kill lands at a uniformly random time within the length of an uninterrupted run (measured
# first), so every phase is hit: start, steps, snapshots, events, sealing.
# One step sleeps with a marker on its command line; after each kill, the runner's own processes
# (the sandbox's helper and init carry its command line, with the manifest's path under $T) and
# the step must all end (the check with a step that would outlive its runner is further down).
mark=nsfaults-$$-$RANDOM
job "$T/k" 10
insertstep "$T/k" "sleep 0.2 && echo $mark"
start=$(date +%s%N)
"$NS" run "$T/k/m.yaml" --out "$T/k/full" >/dev/null 2>"$T/k/err"; rc=$?
span=$((($(date +%s%N) - start) / 1000000))
expect_rc "uninterrupted run: exit 0" 0 "$rc"
[ "$span" -lt 50 ] && span=50
echo "note: an uninterrupted run takes $span ms; kills land in 0..$span ms"
# Kills that land before the run directory exists leave nothing to verify: they are counted and
# the test goes on until KILLS run directories were made (at most twice as many kills).
good=0 incomplete=0 sealed=0 norun=0 bad=0 leftover=0
for i in $(seq $((2 * KILLS))); do
	[ $((good + bad)) -ge "$KILLS" ] && break
	rm -rf "$T/k/runs" "$T/k/ws/out" "$T/k/ws/log.txt" "$T/k/ws/started"
	"$NS" run "$T/k/m.yaml" --out "$T/k/runs" >/dev/null 2>&1 &
	pid=$!
	ms=$((RANDOM % (span + 1)))
	sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	gone "$mark|$T/k/m\.yaml" || leftover=$((leftover + 1))
	dir=$(ls -d "$T/k/runs"/*/ 2>/dev/null | head -n1)
	if [ -z "$dir" ]; then
		norun=$((norun + 1))
		continue
	fi
	out=$("$NS" audit "$dir" --verify 2>&1); rc=$?
	if [ $rc = 0 ] || unsealedok "$out" "$rc"; then
		good=$((good + 1))
		if [ $rc = 4 ]; then incomplete=$((incomplete + 1)); else sealed=$((sealed + 1)); fi
	else
		bad=$((bad + 1))
		echo "FAIL kill after $ms ms: audit --verify exit $rc"; printf '%s\n' "$out" | head -n 10
		cp -r "$dir" "$T/failed-$i" 2>/dev/null
	fi
done
echo "note: SIGKILL: $((good + bad + norun)) kills: $good of $((good + bad)) run directories verified ($incomplete INCOMPLETE, $sealed sealed), $norun kills before a run directory existed"
expect_eq "SIGKILL: every run directory verifies" "0" "$bad"
expect_eq "SIGKILL: $KILLS run directories verified" "$KILLS" "$good"
check "SIGKILL: some kills landed before sealing (INCOMPLETE)" test "$incomplete" -gt 0
expect_eq "SIGKILL: every process of a killed runner ends" 0 "$leftover"

# A step that would run for a minute ends with its runner killed by SIGKILL: the namespace
# sandbox's init sees the runner's end and clears the namespace. Waited for up to 30 s (the
# step's sleep is 60 s). Backend none makes no such promise.
if [ "$BACKEND" = namespace ]; then
	lmark=nsfaults-long-$$-$RANDOM
	job "$T/kl" 4
	insertstep "$T/kl" "sleep 60; echo $lmark"
	"$NS" run "$T/kl/m.yaml" --out "$T/kl/runs" >/dev/null 2>"$T/kl/err" &
	pid=$!
	if waitfor 60 running "$lmark"; then
		kill -9 $pid; wait $pid 2>/dev/null
		check "SIGKILL mid-step: no sandboxed step outlives its runner" gone "$lmark|$T/kl/m\.yaml"
		pkill -9 -f -- "$lmark" 2>/dev/null # what a failure left
	else
		kill -9 $pid; wait $pid 2>/dev/null
		_fail=$((_fail + 1)); echo "FAIL SIGKILL mid-step: the step never started"; cat "$T/kl/err"
	fi
else
	skip "SIGKILL mid-step: no step outlives its runner" "the namespace sandbox does not work here (backend none lets steps outlive the runner)"
fi

# ---- audit on a run whose numbers were tampered with ----
dir=$(ls -d "$T/k/full"/*/ | head -n1)
if [ -n "$dir" ]; then
	t=$T/tampered
	cp -r "$dir" "$t"
	python3 - "$t" <<'PY'
import json, sys
p = sys.argv[1] + "/run.json"
r = json.load(open(p))
for j in r["jobs"].values():
    j["events"] = 1e300
json.dump(r, open(p, "w"))
PY
	"$NS" audit "$t" --verify >/dev/null 2>"$t.err"; rc=$?
	expect_rc "tampered run.json: audit --verify exits 4" 4 "$rc"
	expect_grep "tampered run.json: the change is named" "run.json" "$t.err"
	zstd -dcq "$t/jobs/a/events.jsonl.zst" | sed 's/"step":[0-9]*/"step":1e300/; s/"exit_code":[0-9]*/"exit_code":-1e300/; s/"rule":[0-9]*/"rule":1e300/' |
		zstd -q -f -o "$t/ev.zst" && mv "$t/ev.zst" "$t/jobs/a/events.jsonl.zst"
	"$NS" audit "$t" >"$t.out" 2>"$t.err"; rc=$?
	expect_rc "tampered events: audit lists without crashing" 0 "$rc"
	expect_grep "tampered events: the calls are listed" "echo step" "$t.out"
	"$NS" audit "$t" --verify >/dev/null 2>"$t.err"; rc=$?
	expect_rc "tampered events: audit --verify exits 4" 4 "$rc"
fi
done_tests
