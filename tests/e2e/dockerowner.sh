#!/usr/bin/env bash
# dockerowner: the docker backend on a checkout its steps' uid does not own (a root clone, root's
# cron). Git in a step trusts /workspace (safe.directory, added to the manifest's own
# GIT_CONFIG_COUNT entries); a workspace the steps could not write is refused before the first
# model request by `run` (exit 2) and by `doctor`, naming sandbox.uid, the owner and the fix; and
# setups that work are not refused (world-writable, group-writable, sandbox.uid = the owner).
# The image is tests/dockerenv.sh's busybox one with the host's /usr bound in for git.
# Without an engine, or as a non-root runner (the test chowns), it says SKIPPED and counts nothing.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/dockerenv.sh"
trap 'docker_down; rm -rf "$T"' EXIT

if [ "$(id -u)" != 0 ]; then
	skip dockerowner "needs root to give the workspace to another uid"
	done_tests
	exit
fi
if ! command -v git >/dev/null; then
	skip dockerowner "no git on this machine (apt-get install git)"
	done_tests
	exit
fi
if ! docker_up "$T"; then
	skip dockerowner "$DOCKER_WHY"
	done_tests
	exit
fi
chmod 0755 "$T"
export GIT_CONFIG_NOSYSTEM=1 HOME=$T/home
mkdir -p "$HOME"

# manifest NAME UID ENV...: a manifest $T/NAME.yaml running script $T/NAME.script on workspace $T/NAME
manifest() {
	local name=$1 uid=$2 envs=""; shift 2
	for v in "$@"; do envs="$envs, \"$v\""; done
	cat >"$T/$name.yaml" <<YAML
version: 1
name: $name
workspace: $name
models:
  default: { provider: scripted, script: $name.script }
sandbox:
  backend: docker
  image: $DOCKER_IMAGE
  network: none
  timeout: 20s
  env: [PATH${envs}]
  $( [ -n "$uid" ] && echo "uid: $uid" )
  mounts:
    - { source: /usr, target: /usr }
    - { source: /usr/lib, target: /lib }
    - { source: /usr/lib64, target: /lib64 }
workers:
  w:
    instructions: Look at the repository.
    tools: [shell]
    approval:
      default: deny
      rules:
        - { tool: shell, command: "*", decision: allow }
    output: { type: object, required: [done], properties: { done: { type: boolean } } }
jobs:
  look: { worker: w, input: go }
YAML
}
# script NAME COMMAND...: the scripted model's shell calls, then final_result
script() {
	local name=$1; shift
	{
		for s in "$@"; do
			printf -- '- tool_calls:\n    - { name: shell, arguments: { command: %s } }\n' \
				"$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$s")"
		done
		printf -- '- tool_calls:\n    - { name: final_result, arguments: { done: true } }\n'
	} >"$T/$name.script"
}
# checkout NAME OWNER MODE: a git repository with one commit at $T/NAME, every file OWNER's, its top MODE
checkout() {
	local ws=$T/$1
	mkdir -p "$ws"
	git -C "$ws" init -q -b main
	echo hello >"$ws/a.txt"
	git -C "$ws" add a.txt
	git -C "$ws" -c user.name=t -c user.email=t@t commit -q -m first
	chown -R "$2" "$ws"
	chmod "$3" "$ws"
}
# results NAME: one line per shell call, "EXIT<TAB>STDOUT STDERR" (newlines as spaces)
results() {
	local dir
	dir=$(cat "$T/$1.out")
	zstd -dcq "$dir/jobs/look/events.jsonl.zst" 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    e = json.loads(line)
    if e.get("type") == "tool_result" and e.get("tool") == "shell":
        print("%s\t%s %s" % (e.get("exit_code"), (e.get("stdout") or "").replace("\n", " "), (e.get("stderr") or "").replace("\n", " ")))
'
}
run() { (cd "$T" && "$NS" run "$1.yaml" --out "$T/runs-$1" >"$T/$1.out" 2>"$T/$1.err"); }

# --- 1. safe.directory: a checkout of uid 1001, world-writable, steps as 1000 ---
checkout git 1001:1001 0777
manifest git "" GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0=Night
script git "git log --format=%s" "git status --short" "git config user.name" "touch /workspace/new && echo wrote"
run git; rc=$?
expect_rc "a world-writable checkout of another uid runs" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/git.err"
results git >"$T/git.res"
expect_eq "git log works in a step" "$(printf '0\tfirst  ')" "$(sed -n 1p "$T/git.res")"
expect_nogrep "no dubious ownership" "dubious" "$T/git.res"
expect_eq "git status works in a step" "0" "$(sed -n 2p "$T/git.res" | cut -f1)"
expect_eq "the manifest's own GIT_CONFIG entries still hold" "$(printf '0\tNight  ')" "$(sed -n 3p "$T/git.res")"
expect_eq "the step wrote the workspace" "$(printf '0\twrote  ')" "$(sed -n 4p "$T/git.res")"

# --- 2. a workspace the steps cannot write: refused before anything runs ---
checkout ro 1001:1001 0755
manifest ro ""
script ro "touch /workspace/x"
run ro; rc=$?
expect_rc "run refuses a workspace the steps cannot write (exit 2)" 2 "$rc"
expect_grep "the refusal names the owner" "owned by uid 1001" "$T/ro.err"
expect_grep "and the steps' uid" "sandbox.uid.*1000|1000.*sandbox.uid" "$T/ro.err"
expect_grep "and the fixes" "chown .*1000.*$T/ro" "$T/ro.err"
expect_grep "and sandbox.uid: 1001 as the other fix" "sandbox.uid: 1001" "$T/ro.err"
expect_eq "before any run directory was made" "" "$(ls -A "$T/runs-ro" 2>/dev/null)"
expect_nogrep "and before the job started" "started" "$T/ro.err"
(cd "$T" && "$NS" doctor ro.yaml >"$T/ro.doc" 2>&1); rc=$?
check "doctor fails on it" test "$rc" != 0
expect_grep "doctor says why" "FAIL.*owned by uid 1001" "$T/ro.doc"
# a mount the steps write (mode: rw) is held to the same
checkout rwm 1000:1000 0755
mkdir -p "$T/data" && chown 1001:1001 "$T/data" && chmod 0755 "$T/data"
manifest rwm ""
sed -i 's|    - { source: /usr, target: /usr }|    - { source: /usr, target: /usr }\n    - { source: data, target: /data, mode: rw }|' "$T/rwm.yaml"
script rwm "touch /data/x"
run rwm; rc=$?
expect_rc "a read-write mount the steps cannot write is refused" 2 "$rc"
expect_grep "naming the mount" "/data" "$T/rwm.err"

# --- 3. setups that work are not refused ---
checkout grp 1001:1000 0775
chmod -R g+w "$T/grp"
manifest grp ""
script grp "touch /workspace/g && echo wrote"
run grp; rc=$?
expect_rc "a group-writable workspace of the steps' gid runs" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/grp.err"
expect_eq "and the step wrote it" "$(printf '0\twrote  ')" "$(results grp | sed -n 1p)"
checkout own 1001:1001 0755
manifest own 1001
script own "touch /workspace/o && echo wrote" "git log --format=%s"
run own; rc=$?
expect_rc "sandbox.uid: 1001 on a checkout of 1001 runs" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/own.err"
expect_eq "and the step wrote it" "$(printf '0\twrote  ')" "$(results own | sed -n 1p)"
(cd "$T" && "$NS" doctor own.yaml >"$T/own.doc" 2>&1)
expect_nogrep "doctor does not fail it" "^FAIL" "$T/own.doc"
done_tests
