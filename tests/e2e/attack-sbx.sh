#!/usr/bin/env bash
# attack-sbx: an outside attack on the namespace sandbox and the egress proxy, each case a hostile
# shell step of a scripted worker (approval default allow).
# 1. vsock under network.allow: AF_VSOCK is not a network namespace's, so a step whose network is
#    the proxy alone could open one, bind the host's ports (EADDRINUSE against a listener of the
#    runner's machine) and connect to the hypervisor (CID 2) or another VM, past the allow list.
#    Now the networked filter refuses the family as it refuses AF_PACKET (docker's does too).
# 2. /dev/shm was a tmpfs of the kernel's default size, half the host's memory, while /tmp is as
#    large as the memory limit. Without a memory cgroup (an ordinary user: rlimits only) a step
#    kept 2 GB there under `memory: 1G`, and it stayed for the job's later steps. Now /dev/shm
#    takes the memory limit as /tmp does.
# 3. A step opened connections to the proxy as fast as it could (33632 refused CONNECTs in 10 s
#    here): the proxy kept a record of each (about 3 KB of the runner's memory each, 100 MB in
#    those 10 s) and each became a net_connection event, for as long as the step's timeout. Now
#    the proxy records the first EGRESSKEEP (1000) of a step and counts the rest.
# 4. A mount source (or a job's workspace) the manifest names inside a workspace: a step replaced
#    the folder with a symbolic link to a host folder (its host path is in /proc/self/mountinfo),
#    and the next sandbox built on the same paths followed it: a later job's /tools was the host's
#    folder (read, or written with mode rw), and so was a later job's whole workspace; a restarted
#    sandbox of the same job (cold, or after init died) did the same through init's bind. Now the
#    plan refuses a source that is no longer its own real path, and init checks each source it
#    binds is the one planned. The file tools, which run in the runner, took the workspace by its
#    path as well (read_file and write_file of a later job read and wrote the host folder): a job
#    now starts only on a workspace that is still its own real path, opened as found. So with an
#    image folder in the workspace (`image: ./ws/rootfs`): a later job ran in the host folder the
#    link named, its files the step's to read.
# 5. A declared file (`files:`) is copied into the run directory. `truncate -s 3G c.txt` takes a
#    step a millisecond and no block; its copy in jobs/J/files/ took 3 GB of the runner's disk
#    (every block written) and 21 s, and nothing bounded it (snapshot.max_size counts blocks).
#    Now the copy keeps the holes, and a declared file larger than snapshot.max_size fails the
#    job: every byte of it is read and hashed, here and by every audit.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
needuserns attack-sbx
command -v zstd >/dev/null && command -v python3 >/dev/null || { skip attack-sbx "zstd and python3 are needed"; done_tests; exit; }

# manifest DIR SANDBOX CMD...: DIR/m.yaml, a job running each CMD as a shell step in DIR/ws;
# SANDBOX is what the sandbox map holds besides the backend.
manifest() {
	local d=$1 sbx=$2 c
	shift 2
	mkdir -p "$d/ws"
	exec 3>"$d/m.yaml"
	printf 'version: 1\nworkspace: ws\nsandbox: { backend: namespace, %s }\n' "$sbx" >&3
	printf 'models:\n  m:\n    provider: scripted\n    replies:\n' >&3
	for c in "$@"; do
		printf '      - { tool_calls: [ { name: shell, arguments: { command: %s } } ] }\n' \
			"$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$c")" >&3
	done
	printf '      - { tool_calls: [ { name: final_result, arguments: {} } ] }\n' >&3
	printf 'workers:\n  w: { model: m, instructions: x, tools: [shell, read_file, write_file], approval: { default: allow } }\n' >&3
	printf 'jobs:\n  j: { worker: w }\n' >&3
	exec 3>&-
}
# nsrun DIR: run DIR/m.yaml (as the user of DIR/ws when that is not us)
nsrun() {
	local who
	who=$(stat -c %U "$1/ws")
	if [ "$who" = "$(id -un)" ]; then "$NS" run "$1/m.yaml" --out "$1/runs" >/dev/null 2>"$1/err"
	else runuser -u "$who" -- "$NS" run "$1/m.yaml" --out "$1/runs" >/dev/null 2>"$1/err"; fi
}
# outs DIR: each shell step's stdout, one a line (newlines as |)
outs() {
	zstd -dcq "$1"/runs/*/jobs/j/events.jsonl.zst | python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e.get("type") == "tool_result" and e.get("tool") == "shell":
        print((e.get("stdout") or "").strip().replace("\n", "|"))'
}

# 1. vsock
if python3 -c 'import socket; socket.socket(40, socket.SOCK_STREAM)' 2>/dev/null; then
	vport=$((20000 + RANDOM % 20000))
	python3 - "$vport" "$T/vs.ready" <<'PY' &
import socket, sys, time
s = socket.socket(40, socket.SOCK_STREAM); s.bind((0xffffffff, int(sys.argv[1]))); s.listen(1)
open(sys.argv[2], "w").close(); time.sleep(60)
PY
	vpid=$!
	waitfor 20 test -f "$T/vs.ready"
	d=$T/vsock
	manifest "$d" 'network: { allow: [example.com] }, timeout: 30s' "python3 -c 'import socket
try:
    s = socket.socket(40, socket.SOCK_STREAM); s.bind((0xffffffff, $vport)); print(\"ESCAPED bound\")
except OSError as e: print(\"blocked\", e.errno)'"
	nsrun "$d" || cat "$d/err"
	expect_eq "vsock under network.allow: the family is refused (EAFNOSUPPORT), not the host's port space" \
		"blocked 97" "$(outs "$d")"
	kill "$vpid" 2>/dev/null; wait "$vpid" 2>/dev/null
else
	skip attack-sbx-vsock "this machine has no vsock transport (AF_VSOCK): the vsock case was NOT tested"
fi

# 2. /dev/shm within the memory limit, as root and as an ordinary user (no cgroup there)
for who in "$(id -un)" $([ "$(id -u)" = 0 ] && echo nobody); do # as root, an ordinary user too
	d=$T/shm-$who
	manifest "$d" 'network: none, timeout: 30s, memory: 64M' \
		'echo $(($(stat -f -c "%b * %S" /dev/shm))) $(($(stat -f -c "%b * %S" /tmp)))'
	chown -R "$who" "$d" && chmod 755 "$T"
	nsrun "$d" || cat "$d/err"
	expect_eq "/dev/shm as $who: as large as the memory limit, as /tmp is" "67108864 67108864" "$(outs "$d")"
done

# 3. a flood of refused connections
d=$T/flood
manifest "$d" 'network: { allow: [example.com] }, timeout: 60s' "python3 -c 'import socket
for i in range(1500):
    s = socket.create_connection((\"127.0.0.1\", 3128)); s.sendall(b\"CONNECT evil.example:443 HTTP/1.1\\r\\n\\r\\n\"); s.recv(4096); s.close()
print(\"done\")'"
nsrun "$d" || cat "$d/err"
expect_eq "a flood of 1500 refused connections ran" "done" "$(outs "$d")"
expect_eq "its net_connection events: the first 1000" 1000 "$(zstd -dcq "$d"/runs/*/jobs/j/events.jsonl.zst | grep -c '"type":"net_connection"')"
expect_eq "the step's result counts them all and says how many are unrecorded" "1500 1500 500" \
	"$(zstd -dcq "$d"/runs/*/jobs/j/events.jsonl.zst | python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e.get("type") == "tool_result" and e.get("tool") == "shell":
        print(e.get("connections"), e.get("connections_refused"), e.get("connections_unrecorded"))')"
"$NS" audit "$d"/runs/* --verify >/dev/null 2>&1
expect_rc "the flooded run verifies" 0 $?

# 4. symbolic links planted where a later sandbox binds from
mkdir -p "$T/outside" && echo HOST-SECRET >"$T/outside/key"
# twojobs DIR SANDBOX WORKSPACE-OF-K: job j plants the link, job k (after it) looks behind it
twojobs() {
	mkdir -p "$1/ws/tools" "$1/ws/sub"
	cat >"$1/m.yaml" <<YAML
version: 1
workspace: ws
sandbox: { backend: namespace, network: none, timeout: 30s, $2 }
models:
  m1: { provider: scripted, replies: [ { tool_calls: [ { name: shell, arguments: { command: "for f in tools sub; do mv \$f \$f.old && ln -s ../../outside \$f; done; echo planted" } } ] },
    { tool_calls: [ { name: final_result, arguments: {} } ] } ] }
  m2: { provider: scripted, replies: [ { tool_calls: [ { name: shell, arguments: { command: "cat /tools/key /workspace/key; echo PWNED > /tools/key" } } ] },
    { tool_calls: [ { name: final_result, arguments: {} } ] } ] }
workers:
  w1: { model: m1, instructions: x, tools: [shell], approval: { default: allow } }
  w2: { model: m2, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w1 }
  k: { worker: w2, needs: [j], workspace: $3 }
YAML
	"$NS" run "$1/m.yaml" --out "$1/runs" >/dev/null 2>"$1/err"
}
twojobs "$T/srcjobs" 'mounts: [ { source: ws/tools, target: /tools, mode: rw } ]' ws
expect_grep "a later job whose mount source became a link fails, naming it" \
	"job k: failed: .*sandbox mount .*/tools now leads to $T/outside.*refused" "$T/srcjobs/err"
twojobs "$T/wsjobs" 'mounts: []' ws/sub
expect_grep "a later job whose workspace became a link fails, naming it" \
	"job k: failed: .*now leads to $T/outside.*refused" "$T/wsjobs/err"
# the file tools run in the runner and took the workspace by its path too: read and written there
d=$T/wstools
mkdir -p "$d/ws/sub"
cat >"$d/m.yaml" <<YAML
version: 1
workspace: ws
sandbox: { backend: namespace, network: none, timeout: 30s }
models:
  m1: { provider: scripted, replies: [ { tool_calls: [ { name: shell, arguments: { command: "mv sub sub.old && ln -s ../../outside sub" } } ] },
    { tool_calls: [ { name: final_result, arguments: {} } ] } ] }
  m2: { provider: scripted, replies: [ { tool_calls: [ { name: read_file, arguments: { path: key } } ] },
    { tool_calls: [ { name: write_file, arguments: { path: key, content: PWNED } } ] },
    { tool_calls: [ { name: final_result, arguments: {} } ] } ] }
workers:
  w1: { model: m1, instructions: x, tools: [shell], approval: { default: allow } }
  w2: { model: m2, instructions: x, tools: [read_file, write_file], approval: { default: allow } }
jobs:
  j: { worker: w1 }
  k: { worker: w2, needs: [j], workspace: ws/sub }
YAML
"$NS" run "$d/m.yaml" --out "$d/runs" >/dev/null 2>"$d/err"
expect_grep "a later job's file tools on a workspace that became a link: the job fails first" \
	"job k: failed: .*now leads to $T/outside.*refused" "$d/err"
# an image folder in the workspace made a link: a later job's root file system
if command -v busybox >/dev/null && file -L "$(command -v busybox)" 2>/dev/null | grep -q static; then
	d=$T/image
	mkdir -p "$d/ws/rootfs/bin" "$T/outside/bin"
	for b in "$d/ws/rootfs/bin/sh" "$d/ws/rootfs/bin/busybox" "$T/outside/bin/sh" "$T/outside/bin/busybox"; do cp "$(command -v busybox)" "$b"; done
	cat >"$d/m.yaml" <<YAML
version: 1
workspace: ws
sandbox: { backend: namespace, network: none, timeout: 30s, image: ./ws/rootfs }
models:
  m1: { provider: scripted, replies: [ { tool_calls: [ { name: shell, arguments: { command: "busybox mv rootfs rootfs.old && busybox ln -s ../../outside rootfs" } } ] },
    { tool_calls: [ { name: final_result, arguments: {} } ] } ] }
  m2: { provider: scripted, replies: [ { tool_calls: [ { name: shell, arguments: { command: "busybox cat /key" } } ] },
    { tool_calls: [ { name: final_result, arguments: {} } ] } ] }
workers:
  w1: { model: m1, instructions: x, tools: [shell], approval: { default: allow } }
  w2: { model: m2, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w1 }
  k: { worker: w2, needs: [j] }
YAML
	"$NS" run "$d/m.yaml" --out "$d/runs" >/dev/null 2>"$d/err"
	expect_grep "a later job whose image folder became a link fails, naming it" \
		"job k: failed: .*sandbox image .*rootfs now leads to $T/outside.*refused" "$d/err"
	expect_eq "and read nothing behind it" 0 "$(zstd -dcq "$d"/runs/*/jobs/*/events.jsonl.zst | grep -c HOST-SECRET)"
else
	skip attack-sbx-image "no static busybox to make an image folder: the image-folder link case was NOT tested"
fi
# the same within one job: a cold sandbox is built again for every step, on the plan of its first
d=$T/cold
manifest "$d" 'network: none, timeout: 30s, mounts: [ { source: ws/tools, target: /tools, mode: rw } ]' \
	"mv tools tools.old && ln -s ../../outside tools && echo planted" "cat /tools/key; echo PWNED > /tools/key"
mkdir -p "$d/ws/tools"
NIGHTSHIFT_SANDBOX_COLD=1 nsrun "$d"
expect_grep "a cold sandbox's bind of a source that became a link is refused by init" \
	"is no longer what it was when planned" "$d/err"
expect_eq "the host folder behind the links is neither read nor written" "HOST-SECRET" "$(cat "$T/outside/key")"
expect_eq "nothing of it reached a step" 0 \
	"$(cat "$T"/srcjobs/runs/*/jobs/*/events.jsonl.zst "$T"/wsjobs/runs/*/jobs/*/events.jsonl.zst \
		"$T"/wstools/runs/*/jobs/*/events.jsonl.zst "$d"/runs/*/jobs/*/events.jsonl.zst | zstd -dcq | grep -c HOST-SECRET)"

# 5. a sparse declared file
for case in "64M 1G" "64M 32M"; do
	set -- $case
	d=$T/sparse-$2
	manifest "$d" 'network: none, timeout: 30s' "truncate -s $1 big.bin && echo made"
	sed -i "s|^jobs:|snapshot: { max_size: $2 }\njobs:|; s|j: { worker: w }|j: { worker: w, files: [big.bin] }|" "$d/m.yaml"
	nsrun "$d"
done
f=$(ls "$T"/sparse-1G/runs/*/jobs/j/files/big.bin 2>/dev/null)
expect_eq "a sparse declared file under max_size: copied whole, holes kept" "67108864 small" \
	"$(stat -c %s "$f" 2>/dev/null) $([ -n "$f" ] && [ "$(stat -c %b "$f")" -lt 1024 ] && echo small || echo "$(stat -c %b "$f" 2>/dev/null) blocks")"
"$NS" audit "$T"/sparse-1G/runs/* --verify >/dev/null 2>&1
expect_rc "and the run verifies" 0 $?
expect_grep "a declared file over max_size fails the job, saying so" \
	"declared file big.bin is 67108864 bytes long: the declared files may take snapshot.max_size" "$T/sparse-32M/err"
expect_eq "and is not copied" "" "$(ls "$T"/sparse-32M/runs/*/jobs/j/files 2>/dev/null)"

done_tests
