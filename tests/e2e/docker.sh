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
SPIDS=()
trap 'for p in "${SPIDS[@]}"; do kill "$p" 2>/dev/null; done; docker_down; rm -rf "$T"' EXIT

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
waitfor 60 test -s "$T/port"
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
ours() { DOCKER_HOST=unix://$DOCKER_SOCK docker ps -aq --filter "label=nightshift.pid=$1" | wc -l; }  # containers of runner pid $1
# escapes LABEL: the job above through the engine DOCKER_HOST names (the real one when unset)
escapes() {
local L=$1 rc npid dir
rm -f "$ws/made-by-step" "$ws/sh2"
"$NS" run "$T/m.yaml" --out "$T/runs" >"$T/out" 2>"$T/err" &
npid=$!
wait $npid; rc=$?
dir=$(cat "$T/out")
expect_rc "docker job exits 0$L" 0 "$rc"
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
expect_eq "every shell call allowed and run$L" "${#steps[@]}" "$(python3 - "$T/ev.jsonl" <<'PY'
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
expect_eq "runs as uid 1000$L" "1000" "$(field 1 stdout | tr -d '\n')"
check "host file outside the mounts unreadable$L" test "$(field 2 exit_code)" != 0
check "and not leaked$L" bash -c "! grep -q host-secret-bytes '$T/results'"
check "read-only root$L" test "$(field 3 exit_code)" != 0
expect_eq "host loopback listener unreachable$L" 1 "$(field 4 exit_code)"
check "the listener saw no connection$L" test ! -s "$T/conns"
check "CapEff 0$L" has 5 stdout "$(printf 'CapEff:\t0000000000000000')"
check "no-new-privileges$L" has 5 stdout "$(printf 'NoNewPrivs:\t1')"
expect_eq "setuid root binary stays uid 1000$L" "1000" "$(field 6 stdout | tr -d '\n')"
expect_eq "mount refused$L" 1 "$(field 7 exit_code)"
expect_eq "raw socket refused$L" 1 "$(field 8 exit_code)"
expect_eq "fork bomb ends before its timeout$L" false "$(field 9 timed_out)"
check "fork bomb held by the pids limit$L" has 9 stderr "can't fork"
check "nothing left of the bomb$L" lacks 10 stdout COMMAND bomb
expect_eq "memory bomb reported as OOM$L" true "$(field 11 oom)"
expect_eq "background step returns$L" "started" "$(field 12 stdout | tr -d '\n')"
check "no background process survived its step$L" lacks 13 stdout COMMAND "sleep 10"
check "passed variable visible$L" has 14 stdout NS_PASSED=passed-in
check "runner environment not visible$L" lacks 14 stdout PATH= NS_RUNNER_SECRET
check "runner secret value not visible$L" lacks 14 stdout PATH= runner-secret-value
expect_eq "timeout enforced$L" true "$(field 15 timed_out)"
check "nothing survived the timeout$L" lacks 16 stdout COMMAND "sleep 30"
expect_eq "files written into the workspace belong to uid 1000$L" 1000 "$(stat -c %u "$ws/made-by-step" 2>/dev/null)"
expect_eq "the step cannot ptrace its wrapper$L" 1 "$(field 18 exit_code)"
expect_eq "nor write to its wrapper's memory through /proc$L" 1 "$(field 19 exit_code)"
check "a set-id chmod is refused$L" test "$(field 20 exit_code)" != 0
expect_eq "no set-id file left in the workspace$L" "" "$(find "$ws" -perm /6000)"
expect_eq "no container left after the job$L" 0 "$(ours $npid)"
}
escapes ""

# --- stand-in engines in front of the real one (tests/dockerstandin.py): moby's version check ---
standin() {  # NAME ARGS...: a stand-in engine on $T/NAME.sock (with --tcp FILE: on the port it writes
	# to FILE, which the caller waits for), logging each request to $T/NAME.log
	local name=$1; shift
	python3 "$ROOT/tests/dockerstandin.py" "$T/$name.sock" "$DOCKER_SOCK" --log "$T/$name.log" "$@" \
		>"$T/$name.out" 2>&1 &
	SPIDS+=($!)
	case " $* " in *" --tcp "*) ;; *) waitfor 60 test -S "$T/$name.sock" ;; esac
	touch "$T/$name.log"
}
standin new --api 1.52 --min 1.44
curl -s --unix-socket "$T/new.sock" http://localhost/v1.41/containers/json >"$T/new.old" 2>&1
expect_grep "the stand-in answers API 1.41 as Docker 29.0-29.2 do" "client version 1.41 is too old. Minimum supported API version is 1.44" "$T/new.old"
: >"$T/new.log"
export DOCKER_HOST=unix://$T/new.sock
escapes " (engine wanting API >= 1.44)"
unset DOCKER_HOST
expect_nogrep "no request refused by the newer engine" " too-(old|new)$" "$T/new.log"
expect_grep "the version negotiated is the engine's newest that nightshift knows (1.52)" "^POST /v1.52/containers/create ok" "$T/new.log"
expect_grep "and the hijacked streams use it too" "^POST /v1.52/(containers/[0-9a-f]+/attach|exec/[0-9a-f]+/start)" "$T/new.log"
touch "$T/port.stop"; wait $LPID 2>/dev/null

printf -- '- tool_calls:\n    - { name: shell, arguments: { command: "echo ran" } }\n- tool_calls:\n    - { name: final_result, arguments: { done: true } }\n' >"$T/script.yaml"
standin old --api 1.40 --min 1.12
DOCKER_HOST=unix://$T/old.sock "$NS" run "$T/m.yaml" --out "$T/runs" >/dev/null 2>"$T/err.old"; rc=$?
check "an engine older than API 1.41: the run fails" test "$rc" != 0
expect_grep "and says which versions" "speaks API versions up to 1.40; nightshift needs 1.41 or newer" "$T/err.old"
standin future --api 1.60 --min 1.53
DOCKER_HOST=unix://$T/future.sock "$NS" run "$T/m.yaml" --out "$T/runs" >/dev/null 2>"$T/err.future"; rc=$?
check "an engine wanting a newer API than nightshift knows: the run fails" test "$rc" != 0
expect_grep "and says which versions" "wants API version 1.53 or newer; nightshift speaks 1.41 to 1.52" "$T/err.future"
expect_nogrep "nothing was created on it" "containers/create" "$T/future.log"

# --- an engine that cannot enforce memory and pids limits: create's Warnings ---
standin warn --api 1.52 --min 1.44 --warn memory,pids
DOCKER_HOST=unix://$T/warn.sock "$NS" run "$T/m.yaml" --out "$T/runs" >"$T/out.warn" 2>"$T/err.warn" &
npid=$!; wait $npid; rc=$?
expect_rc "limits the engine dropped: the job fails" 1 "$rc"
expect_grep "naming the engine's warning" "cannot enforce the sandbox's limits.*Limitation discarded.*PIDs limit discarded" "$T/err.warn"
expect_grep "and the way to run anyway" "limits: warn" "$T/err.warn"
expect_grep "the stand-in answered create" "^POST /v1.52/containers/create ok" "$T/warn.log"
expect_eq "the container made without its limits is removed" 0 "$(ours $npid)"
zstd -dcq "$(cat "$T/out.warn")/jobs/escape/events.jsonl.zst" >"$T/ev.warn" 2>/dev/null
expect_nogrep "no step ran there" '"type":"tool_result"' "$T/ev.warn"
sed -i 's/^  pids: 64$/  pids: 64\n  limits: warn/' "$T/m.yaml"
DOCKER_HOST=unix://$T/warn.sock "$NS" run "$T/m.yaml" --out "$T/runs" >"$T/out.warn" 2>"$T/err.warn"; rc=$?
expect_rc "limits: warn: the job runs" 0 "$rc"
zstd -dcq "$(cat "$T/out.warn")/jobs/escape/events.jsonl.zst" >"$T/ev.warn" 2>/dev/null
expect_grep "and its steps' results say which limits were not enforced" '"limits":"docker \(not enforced: memory pids\)' "$T/ev.warn"
sed -i '/^  limits: warn$/d' "$T/m.yaml"
standin swap --api 1.52 --min 1.44 --warn swap
DOCKER_HOST=unix://$T/swap.sock "$NS" run "$T/m.yaml" --out "$T/runs" >"$T/out.swap" 2>"$T/err.swap"; rc=$?
expect_rc "'Memory limited without swap' (the memory limit holds): a strict sandbox runs" 0 "$rc"
zstd -dcq "$(cat "$T/out.swap")/jobs/escape/events.jsonl.zst" >"$T/ev.swap" 2>/dev/null
expect_grep "and its results still claim the memory limit, which holds" '"limits":"docker memory pids;' "$T/ev.swap"

# --- tcp with TLS (DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH): the stand-in wants a client certificate ---
if command -v openssl >/dev/null; then
	c=$T/certs; mkdir -p "$c/ok" "$c/noclient" "$c/otherca"
	k() { openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$1" -out "$2" -subj "/CN=$3" 2>/dev/null; }
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$c/ca-key.pem" \
		-out "$c/ca.pem" -days 2 -subj /CN=nightshift-test-ca 2>/dev/null
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$c/otherca/ca-key.pem" \
		-out "$c/otherca/ca.pem" -days 2 -subj /CN=nightshift-test-ca 2>/dev/null
	k "$c/server-key.pem" "$c/server.csr" 127.0.0.1
	printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$c/server.ext"
	openssl x509 -req -in "$c/server.csr" -CA "$c/ca.pem" -CAkey "$c/ca-key.pem" -CAcreateserial -days 2 \
		-extfile "$c/server.ext" -out "$c/server.pem" 2>/dev/null
	k "$c/ok/key.pem" "$c/client.csr" client
	printf 'extendedKeyUsage=clientAuth\n' >"$c/client.ext"
	openssl x509 -req -in "$c/client.csr" -CA "$c/ca.pem" -CAkey "$c/ca-key.pem" -CAcreateserial -days 2 \
		-extfile "$c/client.ext" -out "$c/ok/cert.pem" 2>/dev/null
	cp "$c/ca.pem" "$c/ok/ca.pem"
	cp "$c/ca.pem" "$c/noclient/ca.pem"
	cp "$c/ok/cert.pem" "$c/ok/key.pem" "$c/otherca/"
	standin tls --api 1.52 --min 1.44 --tcp "$T/tls.port" --tls "$c/server.pem,$c/server-key.pem,$c/ca.pem"
	waitfor 60 test -s "$T/tls.port"
	tls() { DOCKER_HOST=tcp://127.0.0.1:$(cat "$T/tls.port") DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$c/$1 \
		"$NS" run "$T/m.yaml" --out "$T/runs" >"$T/out.tls" 2>"$T/err.tls"; }
	tls ok; rc=$?
	expect_rc "tcp + TLS with a client certificate: the job runs" 0 "$rc"
	[ "$rc" = 0 ] || cat "$T/err.tls"
	expect_grep "through the TLS stand-in, at 1.52" "^POST /v1.52/containers/create ok" "$T/tls.log"
	expect_grep "hijacked exec streams over TLS too" "^POST /v1.52/exec/[0-9a-f]+/start ok" "$T/tls.log"
	zstd -dcq "$(cat "$T/out.tls")/jobs/escape/events.jsonl.zst" >"$T/ev.tls" 2>/dev/null
	expect_grep "the step's output came back" '"stdout":"ran\\n"' "$T/ev.tls"
	tls noclient; rc=$?
	check "without a client certificate: the run fails" test "$rc" != 0
	expect_grep "the engine refused the handshake" "TLS handshake refused" "$T/tls.log"
	expect_grep "and the error names the engine" "tcp://127.0.0.1:[0-9]+" "$T/err.tls"
	tls otherca; rc=$?
	check "an engine whose certificate another CA signed: the run fails" test "$rc" != 0
	expect_grep "saying why" "certificate|SSL" "$T/err.tls"
else
	skip "docker over tcp with TLS" "no openssl to make the certificates (ci/packages.txt installs it)"
fi
# --- SIGTERM to the runner mid-step: the container goes too ---
printf -- '- tool_calls:\n    - { name: shell, arguments: { command: "sleep 60" } }\n- tool_calls:\n    - { name: final_result, arguments: { done: true } }\n' >"$T/script.yaml"
sed -i 's/timeout: 5s/timeout: 90s/' "$T/m.yaml"
"$NS" run "$T/m.yaml" --out "$T/runs" >/dev/null 2>"$T/err.term" &
npid=$!
waitfor 60 eval '[ "$(ours $npid)" = 1 ]'
expect_eq "the job's container runs" 1 "$(ours $npid)"
sleep 0.5
kill -TERM $npid
wait $npid; rc=$?
echo "nightshift exited $rc after SIGTERM"
expect_rc "SIGTERM mid-step in docker: exit 130" 130 "$rc"
[ "$rc" = 130 ] || cat "$T/err.term"
waitfor 60 eval '[ "$(ours $npid)" = 0 ]'
expect_eq "container removed after SIGTERM" 0 "$(ours $npid)"

# --- errors: no engine, the namespace default image ---
DOCKER_HOST=unix://$T/no-engine.sock "$NS" run "$T/m.yaml" --out "$T/runs2" >/dev/null 2>"$T/err.sock"; rc=$?
expect_rc "no engine: exit 2 before anything runs" 2 "$rc"
check "no engine: no run directory" test -z "$(ls -A "$T/runs2" 2>/dev/null)"
expect_grep "no engine: the socket tried is named" "unix://$T/no-engine.sock" "$T/err.sock"
# an image the engine lacks, and a job whose first call would change the workspace: found first
printf -- '- tool_calls:\n    - { name: shell, arguments: { command: "touch /workspace/first-step" } }\n- tool_calls:\n    - { name: final_result, arguments: { done: true } }\n' >"$T/script.yaml"
sed "s|image: $DOCKER_IMAGE|image: nightshift-test:absent|" "$T/m.yaml" >"$T/absent.yaml"
"$NS" run "$T/absent.yaml" --out "$T/runs2" >/dev/null 2>"$T/err.absent"; rc=$?
expect_rc "an image the engine lacks: exit 2 before anything runs" 2 "$rc"
expect_grep "naming the image" "image 'nightshift-test:absent' is not in the engine" "$T/err.absent"
check "the workspace untouched" test ! -e "$ws/first-step"
check "no run directory" test -z "$(ls -A "$T/runs2" 2>/dev/null)"
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
