#!/usr/bin/env bash
# hostile: what a step leaves and what a record brings, read back by the host. Terminal escapes
# and workflow commands in what audit and errors print, and a secret cut at a cap or a width.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
unset GITHUB_ACTIONS
ws=$T/ws
mkdir -p "$ws"
backend=none
userns && backend=namespace
export NS_TOKEN=tok_e2e_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789
pad=$(printf 'a%.0s' $(seq 50))
cat > "$T/m.yaml" <<YAML
version: 1
workspace: ws
secrets: [NS_TOKEN]
sandbox: { backend: $backend, env: [NS_TOKEN] }
models:
  m:
    provider: scripted
    replies:
      - { tool_calls: [ { name: "\u001b]0;owned\u0007\u009b2J\u202etxt.exe\u007f", arguments: {} } ] }
      - { tool_calls: [ { name: shell, arguments: { command: "head -c 65516 /dev/zero | tr '\\\\0' a; printenv NS_TOKEN" } } ] }
      - { tool_calls: [ { name: shell, arguments: { command: "echo $pad $NS_TOKEN" } } ] }
      - { tool_calls: [ { name: shell, arguments: { command: "printf '\\\\033[2J\\\\302\\\\233H'" } } ] }
      - { tool_calls: [ { name: final_result, arguments: {} } ] }
workers:
  w: { model: m, instructions: x, tools: [shell], approval: { default: deny, rules: [ { tool: shell, command: "head *", decision: allow }, { tool: shell, command: "tr *", decision: allow }, { tool: shell, command: "printenv *", decision: allow }, { tool: shell, command: "printf *", decision: allow } ] } }
jobs:
  j: { worker: w }
YAML
"$NS" run "$T/m.yaml" --out "$T/runs" > "$T/out" 2> "$T/err"
expect_rc "the run succeeds" 0 $?
run=$(cat "$T/out")
zstd -dcq "$run/jobs/j/events.jsonl.zst" > "$T/ev"

# No bytes that drive a terminal: C0 but \n \t, DEL, C1 (raw or UTF-8), bidi controls.
inert() { # inert NAME FILE
	python3 - "$2" <<'PY'
import re, sys
b = open(sys.argv[1], "rb").read()
bad = re.search(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\x8e\x8f\xaa-\xae]|\xe2\x81[\xa6-\xa9]|\xd8\x9c", b)
try:
    b.decode("utf-8")
except UnicodeDecodeError as e:
    print("not UTF-8 at", e.start); sys.exit(1)
if bad:
    print("at", bad.start(), repr(b[max(0, bad.start() - 20):bad.start() + 20])); sys.exit(1)
PY
}
"$NS" audit "$run" > "$T/table" 2>&1
expect_rc "audit exits 0" 0 $?
check "audit's table: no terminal controls from the record" inert table "$T/table"
expect_grep "the tool name is shown, its controls visible" '\\x1b\]0;owned\\x07' "$T/table"
"$NS" audit "$run" --verify > "$T/verify" 2>&1
check "audit --verify: no terminal controls" inert verify "$T/verify"

# A hostile run.json (archives come from elsewhere): its job error printed by audit and under
# GitHub Actions no line becomes a workflow command.
cp -r "$run" "$T/forged"
python3 - "$T/forged/run.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for j in r["jobs"].values():
    j["error"] = "x\n::stop-commands::tok\n  ::error::owned\nand ##[error]owned \x1b[31m\u009b1m\u202e"
json.dump(r, open(sys.argv[1], "w"))
PY
GITHUB_ACTIONS=true "$NS" audit "$T/forged" > "$T/forged.out" 2>&1
check "forged run.json: no terminal controls" inert forged "$T/forged.out"
expect_nogrep "forged run.json under Actions: no line is a workflow command" '^[[:space:]]*::' "$T/forged.out"
expect_nogrep "forged run.json under Actions: no ##[ command" '##\[' "$T/forged.out"
GITHUB_ACTIONS=true "$NS" audit "$T/forged" --verify > "$T/forged.v" 2>&1
expect_rc "forged run.json fails verification" 4 $?
check "forged: verify's report has no terminal controls" inert forged-verify "$T/forged.v"

# The secret: cut at the 64 KiB the event keeps of stdout, and in a decision's reason.
expect_nogrep "no prefix of the secret in the events" 'tok_e2e_A' "$T/ev"
expect_grep "the cut secret is masked" '\[secret:NS_TOKEN\]' "$T/ev"
"$NS" audit "$run" --json > "$T/json"
expect_nogrep "no prefix of the secret in audit's table" 'tok_e2e_A' "$T/table"
expect_nogrep "no prefix of the secret in audit --json" 'tok_e2e_A' "$T/json"

# replay of a stranger's record: backend none, a host mount and sandbox.env from the archive are
# not taken; the record's commands run in the default sandbox, and stderr says so.
if [ "$backend" = namespace ]; then
	mkdir -p "$T/rws" "$T/hostdir"
	cat > "$T/r.yaml" <<YAML
version: 1
workspace: rws
sandbox: { backend: none }
models:
  m:
    provider: scripted
    replies:
      - { tool_calls: [ { name: shell, arguments: { command: "touch $T/ran-on-host" } } ] }
      - { tool_calls: [ { name: final_result, arguments: {} } ] }
  k:
    provider: scripted
    replies:
      - { tool_calls: [ { name: shell, arguments: { command: "touch /data/written; printenv NS_TOKEN; echo end" } } ] }
      - { tool_calls: [ { name: final_result, arguments: {} } ] }
workers:
  w: { model: m, instructions: x, tools: [shell], approval: { default: allow } }
  v: { model: k, instructions: x, tools: [shell], approval: { default: allow },
       sandbox: { backend: namespace, env: [NS_TOKEN], network: host, mounts: [ { source: $T/hostdir, target: /data, mode: rw } ] } }
jobs:
  a: { worker: w }
  b: { worker: v }
YAML
	"$NS" run "$T/r.yaml" --out "$T/rruns" > "$T/rout" 2> "$T/rerr"
	expect_rc "the stranger's run (backend none, a mount) succeeds where it was made" 0 $?
	check "there it ran on its host" test -e "$T/ran-on-host" -a -e "$T/hostdir/written"
	rm -f "$T/ran-on-host" "$T/hostdir/written"
	rrun=$(cat "$T/rout")
	tar --zstd -cf "$T/RUN.tar.zst" -C "$(dirname "$rrun")" "$(basename "$rrun")"
	"$NS" replay "$T/RUN.tar.zst" --out "$T/replays" > "$T/pout" 2> "$T/perr"
	check "replay of the archive: nothing ran on this host" test ! -e "$T/ran-on-host"
	check "replay: the record's mount was not made" test ! -e "$T/hostdir/written"
	expect_grep "replay says backend none was not taken" "WARNING: .*backend none.*namespace sandbox" "$T/perr"
	expect_grep "replay says the mount was not made" "WARNING: .*mount $T/hostdir -> /data is not made" "$T/perr"
	expect_grep "replay says sandbox.env was not passed" "WARNING: .*sandbox.env \(NS_TOKEN\) is not passed" "$T/perr"
	expect_grep "replay says the network was not given" "WARNING: .*network access is not given" "$T/perr"
	prun=$(cat "$T/pout")
	if [ -n "$prun" ] && [ -f "$prun/jobs/b/events.jsonl.zst" ]; then
		zstd -dcq "$prun/jobs/b/events.jsonl.zst" > "$T/pev"
		expect_grep "replay: the variable is not passed into the step" '"stdout":"end\\n"' "$T/pev"
	else
		_fail=$((_fail + 1)); echo "FAIL replay made no run directory for job b"; cat "$T/perr"
	fi
	# --manifest: the user's own settings are taken as given.
	"$NS" replay "$T/RUN.tar.zst" --out "$T/replays" --manifest "$T/r.yaml" > /dev/null 2> "$T/merr"
	expect_nogrep "replay --manifest: no warning" "WARNING" "$T/merr"
	check "replay --manifest: the user's backend none ran here" test -e "$T/ran-on-host"
else
	skip replay-distrust "user namespaces are not available here: the replayed commands could not be sandboxed"
fi
done_tests
