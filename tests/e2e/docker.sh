#!/usr/bin/env bash
# docker: the docker backend against a real engine. Starts dockerd when none answers (Debian's
# docker.io, vfs storage; stopped again at the end), imports an image built from a static
# busybox and tests/fixtures/dockerprobe.c, runs the unit binary test_docker against it, then
# the real binary: a job whose scripted model tries the ways out of the sandbox as shell calls
# (the hostile ones as scripts in the workspace, as a model would write them, since the policy
# refuses to allow what it cannot read), the runner's death by SIGTERM, and the errors.
# Without an engine it says SKIPPED and counts nothing.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/dockerenv.sh"
trap 'docker_down; rm -rf "$T"' EXIT

if ! docker_up "$T"; then
	skip docker "$DOCKER_WHY"
	done_tests
	exit
fi
[ -n "$DOCKER_STARTED" ] && echo "started dockerd (pid $DOCKER_STARTED) for these tests"

# --- the backend through sbxopen/sbxexec ---
tb=${TESTBIN:-$(dirname "$NS")/tests}
if [ -x "$tb/test_docker" ]; then
	"$tb/test_docker" >"$T/unit.log" 2>&1
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$T/unit.log" | tail -n 1)
	if [ -z "$line" ]; then
		_fail=$((_fail + 1)); echo "FAIL test_docker: no summary"; tail -n 20 "$T/unit.log"
	else
		p=${line%% passed*}; f=${line#*, }; f=${f%% failed*}
		_pass=$((_pass + p)); _fail=$((_fail + f))
		grep -E '^(FAIL|SKIPPED)' "$T/unit.log"
	fi
else
	skip "docker unit checks" "no $tb/test_docker (make tests)"
fi

# --- through the real binary: escape attempts as the model's shell calls ---
ws=$T/ws
mkdir -p "$ws"
chmod 0777 "$ws"
printf '#!/bin/sh\nb() { b | b & }; b; sleep 1; echo done\n' >"$ws/bomb.sh"
printf '#!/bin/sh\nsleep 100 & setsid sleep 101 & nohup sleep 102 >/dev/null 2>&1 & echo started\n' >"$ws/bg.sh"
printf '#!/bin/sh\nenv\n' >"$ws/env.sh"
chmod 0755 "$ws"/*.sh
echo host-secret-bytes >"$T/secret"
chmod 0644 "$T/secret"
chmod 0755 "$T"

python3 - "$T/port" "$T/conns" <<'PY' &
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8); s.settimeout(0.2)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
end = time.time() + 150
while time.time() < end and not os.path.exists(sys.argv[1] + ".stop"):
    try:
        c, _ = s.accept(); open(sys.argv[2], "a").write("connection\n"); c.close()
    except socket.timeout:
        pass
PY
LPID=$!
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
PORT=$(cat "$T/port")

cat >"$T/m.yaml" <<YAML
version: 1
name: docker-escapes
workspace: ws
models:
  default: { provider: scripted, script: script.yaml }
sandbox:
  backend: docker
  image: $DOCKER_IMAGE
  network: none
  memory: 64M
  pids: 64
  timeout: 5s
  env: [PATH, NS_PASSED]
workers:
  w:
    instructions: Try every way out.
    tools: [shell]
    approval:
      default: deny
      rules:
        - { tool: shell, command: "*", decision: allow }
    output: { type: object, required: [done], properties: { done: { type: boolean } } }
jobs:
  escape: { worker: w, input: go }
YAML
steps=(
	"id -u"
	"cat $T/secret"
	"touch /bin/escaped"
	"/bin/nsprobe connect $PORT"
	"grep -e CapEff -e NoNewPrivs /proc/self/status"
	"/bin/nsprobe-suid euid"
	"/bin/nsprobe mount"
	"/bin/nsprobe rawip"
	"/workspace/bomb.sh"
	"ps -o args"
	"dd if=/dev/zero of=/dev/null bs=128M count=1"
	"/workspace/bg.sh"
	"ps -o args"
	"/workspace/env.sh"
	"sleep 30"
	"ps -o args"
	"touch /workspace/made-by-step"
	"/bin/nsprobe ptrace-wrapper"
	"/bin/nsprobe procmem-wrapper"
	"cp /bin/busybox /workspace/sh2; chmod 6755 /workspace/sh2"
)
{
	for s in "${steps[@]}"; do
		printf -- '- tool_calls:\n    - { name: shell, arguments: { command: %s } }\n' \
			"$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$s")"
	done
	printf -- '- tool_calls:\n    - { name: final_result, arguments: { done: true } }\n'
} >"$T/script.yaml"

export NS_PASSED=passed-in NS_RUNNER_SECRET=runner-secret-value
"$NS" run "$T/m.yaml" --out "$T/runs" >"$T/out" 2>"$T/err" &
npid=$!
wait $npid; rc=$?
dir=$(cat "$T/out")
touch "$T/port.stop"; wait $LPID 2>/dev/null
expect_rc "docker job exits 0" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
zstd -dcq "$dir/jobs/escape/events.jsonl.zst" >"$T/ev.jsonl" 2>/dev/null
python3 - "$T/ev.jsonl" "$T/results" "${steps[@]}" <<'PY'
import json, sys
cmds, res = {}, {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("type") == "decision" and e.get("tool") == "shell" and e.get("decision") == "allow":
        cmds[e["step"]] = e["arguments"]["command"]
    if e.get("type") == "tool_result" and e.get("tool") == "shell":
        res[e.get("step")] = {k: e.get(k) for k in ("exit_code", "signal", "timed_out", "oom", "stdout", "stderr")}
bycmd = {cmds[s]: res[s] for s in cmds if s in res}
with open(sys.argv[2], "w") as out:
    for c in sys.argv[3:]:  # one line per step of the script, in order; {} when it did not run
        out.write(json.dumps(bycmd.get(c, {})) + "\n")
PY
expect_eq "every shell call allowed and run" "${#steps[@]}" "$(python3 - "$T/ev.jsonl" <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    n += e.get("type") == "tool_result" and e.get("tool") == "shell"
print(n)
PY
)"
r() { sed -n "${1}p" "$T/results"; }  # r N: the result of the Nth step as JSON
field() { python3 -c 'import json,sys; v=json.loads(sys.argv[1]).get(sys.argv[2]); print(json.dumps(v) if not isinstance(v,str) else v, end="")' "$(r "$1")" "$2"; }
has() { field "$1" "$2" | grep -qF -- "$3"; }  # has N FIELD TEXT
lacks() { has "$1" "$2" "$3" && ! has "$1" "$2" "$4"; }  # lacks N FIELD PRESENT ABSENT
expect_eq "runs as uid 1000" "1000" "$(field 1 stdout | tr -d '\n')"
check "host file outside the mounts unreadable" test "$(field 2 exit_code)" != 0
check "and not leaked" bash -c "! grep -q host-secret-bytes '$T/results'"
check "read-only root" test "$(field 3 exit_code)" != 0
expect_eq "host loopback listener unreachable" 1 "$(field 4 exit_code)"
check "the listener saw no connection" test ! -s "$T/conns"
check "CapEff 0" has 5 stdout "$(printf 'CapEff:\t0000000000000000')"
check "no-new-privileges" has 5 stdout "$(printf 'NoNewPrivs:\t1')"
expect_eq "setuid root binary stays uid 1000" "1000" "$(field 6 stdout | tr -d '\n')"
expect_eq "mount refused" 1 "$(field 7 exit_code)"
expect_eq "raw socket refused" 1 "$(field 8 exit_code)"
expect_eq "fork bomb ends before its timeout" false "$(field 9 timed_out)"
check "fork bomb held by the pids limit" has 9 stderr "can't fork"
check "nothing left of the bomb" lacks 10 stdout COMMAND bomb
expect_eq "memory bomb reported as OOM" true "$(field 11 oom)"
expect_eq "background step returns" "started" "$(field 12 stdout | tr -d '\n')"
check "no background process survived its step" lacks 13 stdout COMMAND "sleep 10"
check "passed variable visible" has 14 stdout NS_PASSED=passed-in
check "runner environment not visible" lacks 14 stdout PATH= NS_RUNNER_SECRET
check "runner secret value not visible" lacks 14 stdout PATH= runner-secret-value
expect_eq "timeout enforced" true "$(field 15 timed_out)"
check "nothing survived the timeout" lacks 16 stdout COMMAND "sleep 30"
expect_eq "files written into the workspace belong to uid 1000" 1000 "$(stat -c %u "$ws/made-by-step" 2>/dev/null)"
expect_eq "the step cannot ptrace its wrapper" 1 "$(field 18 exit_code)"
expect_eq "nor write to its wrapper's memory through /proc" 1 "$(field 19 exit_code)"
check "a set-id chmod is refused" test "$(field 20 exit_code)" != 0
expect_eq "no set-id file left in the workspace" "" "$(find "$ws" -perm /6000)"
ours() { docker ps -aq --filter "label=nightshift.pid=$1" | wc -l; }  # containers of runner pid $1
expect_eq "no container left after the job" 0 "$(ours $npid)"

# --- SIGTERM to the runner mid-step: the container goes too ---
printf -- '- tool_calls:\n    - { name: shell, arguments: { command: "sleep 60" } }\n- tool_calls:\n    - { name: final_result, arguments: { done: true } }\n' >"$T/script.yaml"
sed -i 's/timeout: 5s/timeout: 90s/' "$T/m.yaml"
"$NS" run "$T/m.yaml" --out "$T/runs" >/dev/null 2>"$T/err.term" &
npid=$!
for _ in $(seq 150); do [ "$(ours $npid)" = 1 ] && break; sleep 0.1; done
expect_eq "the job's container runs" 1 "$(ours $npid)"
sleep 0.5
kill -TERM $npid
wait $npid; rc=$?
echo "nightshift exited $rc after SIGTERM"
expect_rc "SIGTERM mid-step in docker: exit 130" 130 "$rc"
for _ in $(seq 150); do [ "$(ours $npid)" = 0 ] && break; sleep 0.1; done
expect_eq "container removed after SIGTERM" 0 "$(ours $npid)"

# --- errors: no engine, the namespace default image ---
DOCKER_HOST=unix://$T/no-engine.sock "$NS" run "$T/m.yaml" --out "$T/runs" >/dev/null 2>"$T/err.sock"; rc=$?
check "no engine: the run fails" test "$rc" != 0
expect_grep "no engine: the socket tried is named" "unix://$T/no-engine.sock" "$T/err.sock"
sed -i "s|image: $DOCKER_IMAGE|image: host|" "$T/m.yaml"
"$NS" run "$T/m.yaml" --out "$T/runs" >/dev/null 2>"$T/err.host"; rc=$?
check "image host with docker: the run fails" test "$rc" != 0
expect_grep "image host with docker: clear error" "sandbox.image" "$T/err.host"

# --- an image whose shell cannot be copied for the wrappers (over 16 MB): the job fails, saying why ---
mkdir -p "$T/bigsh/bin" "$T/bigsh/tmp" "$T/bigsh/workspace"
{ cat /bin/busybox; head -c 20000000 /dev/zero; } >"$T/bigsh/bin/sh"
chmod 0755 "$T/bigsh/bin/sh"
if tar --owner=0 --group=0 --numeric-owner -C "$T/bigsh" -c . | docker import - nightshift-test:bigsh >/dev/null 2>&1; then
	sed -i "s|image: host|image: nightshift-test:bigsh|" "$T/m.yaml"
	"$NS" run "$T/m.yaml" --out "$T/runs" >/dev/null 2>"$T/err.big"; rc=$?
	expect_rc "shell too big to copy: the job fails" 1 "$rc"
	expect_grep "and says the container did not get ready" "did not get ready: cp: .*No space left" "$T/err.big"
	docker rmi nightshift-test:bigsh >/dev/null 2>&1
else
	_fail=$((_fail + 1)); echo "FAIL docker import of the big-shell image"
fi
done_tests
