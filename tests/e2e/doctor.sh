#!/usr/bin/env bash
# doctor: on this machine a clean report; each cause it names, made here: an unset API key, an
# endpoint that takes no connection (and one that does, with no request sent), a disk too small
# for the workspace's snapshots, the none backend, a manifest with a mistake. A refused user
# namespace is simulated in e2e/userns.sh.
. "$(dirname "$0")/lib.sh"
cd "$T"
"$NS" doctor >out 2>err; rc=$?
expect_rc "this machine: doctor passes" 0 $rc
expect_grep "the namespace sandbox ran a step" '^ok +namespace sandbox +a step ran' out
expect_grep "the seccomp filter loaded" '^ok +seccomp ' out
expect_grep "cgroups: which limits hold" '^(ok|warn) +cgroups ' out
expect_grep "the disk" '^ok +disk +[0-9.]+ MB free' out
expect_grep "the verdict on stderr" 'this machine can run manifests' err

mkdir -p ws
cat >m.yaml <<'EOF'
version: 1
workspace: ws
models:
  gpt: { provider: openai, model: gpt-5-mini, api_key_env: NS_DOCTOR_UNSET_KEY }
  closed: { provider: openai, model: m, base_url: "http://127.0.0.1:9/v1", api_key_env: NS_DOCTOR_KEY }
  open: { provider: openai, model: m, base_url: "http://127.0.0.1:PORT/v1", api_key_env: NS_DOCTOR_KEY }
  dry: { provider: scripted, replies: [ {text: hi} ] }
workers:
  w: { instructions: x, model: dry }
jobs:
  j: { worker: w }
  loose: { worker: w, sandbox: { backend: none } }
EOF
cat >srv.py <<'EOF'
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
while True:
    c, _ = s.accept(); c.settimeout(2)
    try: data = c.recv(100)
    except Exception: data = b""
    open(sys.argv[2], "ab").write(b"REQUEST:" + data + b"\n" if data else b"")
    c.close()
EOF
python3 srv.py port got &
srv=$!
waitfor 60 test -s port
: >got
sed -i "s/PORT/$(cat port)/" m.yaml
NS_DOCTOR_KEY=k "$NS" doctor m.yaml >out2 2>err2; rc=$?
expect_rc "a manifest that cannot run: exit 1" 1 $rc
expect_grep "unset key: the cause" '^FAIL +model gpt +NS_DOCTOR_UNSET_KEY is not set' out2
expect_grep "unset key: the remedy" 'Remedy: export NS_DOCTOR_UNSET_KEY=' out2
expect_grep "closed endpoint: the cause" '^FAIL +model closed +http://127.0.0.1:9/v1 does not take a connection' out2
expect_grep "open endpoint: ok" "^ok +model open +NS_DOCTOR_KEY is set; http://127.0.0.1:$(cat port)/v1 takes a connection" out2
# The server takes one connection at a time: once a last one of ours is written down, doctor's
# connection was done with before it.
python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 10).sendall(b"LAST")' "$(cat port)"
waitfor 30 grep -q 'REQUEST:LAST' got
expect_eq "no request was sent to the endpoint" "REQUEST:LAST" "$(cat got)"
expect_grep "the scripted model needs nothing" '^ok +model dry ' out2
expect_grep "backend none is a warning" '^warn +backend none ' out2
expect_grep "the verdict" 'cannot run it as it is' err2
kill $srv 2>/dev/null

NS_DOCTOR_KEY=k "$NS" doctor m.yaml --json >out3 2>/dev/null
check "--json: the same checks" python3 -c '
import json, sys
c = {x["check"]: x["state"] for x in json.load(open(sys.argv[1]))}
sys.exit(not (c["model gpt"] == "fail" and c["model dry"] == "ok" and c["backend none"] == "warn" and c["namespace sandbox"] == "ok"))' out3

# The docker backend: the engine and each image a job names (once), nothing pulled.
cat >d.yaml <<'EOF'
version: 1
workspace: ws
models: { dry: { provider: scripted, replies: [ {text: hi} ] } }
sandbox: { backend: docker, image: nightshift-test:busybox }
workers: { w: { instructions: x, model: dry } }
jobs:
  a: { worker: w }
  b: { worker: w, sandbox: { image: "nightshift-test:surely-absent" } }
  c: { worker: w }
EOF
DOCKER_HOST=unix://$PWD/no-engine.sock "$NS" doctor d.yaml >out6 2>err6
expect_rc "no docker engine: exit 1" 1 $?
expect_grep "no engine: the cause and what to do" "^FAIL +docker +job a: cannot reach the Docker engine at unix://$PWD/no-engine.sock .*is dockerd running" out6
expect_eq "each image once (a and c share one)" 2 "$(grep -c '^FAIL  docker' out6)"
if DOCKER_HOST=unix:///var/run/docker.sock timeout 10 docker image inspect nightshift-test:busybox >/dev/null 2>&1; then
	DOCKER_HOST=unix:///var/run/docker.sock "$NS" doctor d.yaml >out7 2>err7
	expect_rc "an image the engine lacks: exit 1" 1 $?
	expect_grep "the image it has: ok" "^ok +docker +the engine answers and has image nightshift-test:busybox" out7
	expect_grep "the image it lacks: the cause and the remedy" "^FAIL +docker +job b: .*'nightshift-test:surely-absent' is not in the engine.*docker pull" out7
else
	skip "docker images" "no engine at /var/run/docker.sock with nightshift-test:busybox (e2e/docker imports it)"
fi

printf 'version: 1\nmodls: {}\n' >bad.yaml
"$NS" doctor bad.yaml >/dev/null 2>err4
expect_rc "a manifest with a mistake: exit 2" 2 $?
expect_grep "the mistake at its place" 'bad.yaml:2:1: unknown key' err4
"$NS" doctor --bogus >/dev/null 2>&1
expect_rc "a bad flag: exit 2" 2 $?

# A disk too small: the runs folder on a 1 MB tmpfs, a workspace of 3 MB.
if [ "$(id -u)" = 0 ] && mkdir -p small && mount -t tmpfs -o size=1m tmpfs small 2>/dev/null; then
	head -c 3000000 /dev/urandom >ws/big
	cat >s.yaml <<'EOF'
version: 1
workspace: ws
models: { dry: { provider: scripted, replies: [ {text: hi} ] } }
workers: { w: { instructions: x, model: dry } }
jobs: { j: { worker: w } }
EOF
	"$NS" doctor s.yaml --out small/runs >out5 2>/dev/null; rc=$?
	umount small
	expect_rc "a disk too small: exit 1" 1 $rc
	expect_grep "a disk too small: the cause and the remedy" '^FAIL +disk +[0-9.]+ MB free under .*small, less than the workspace takes \(3\.[0-9] MB\).*Remedy' out5
else
	skip "disk too small" "making a small tmpfs needs root"
fi
done_tests
