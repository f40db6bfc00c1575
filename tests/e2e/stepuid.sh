#!/usr/bin/env bash
# stepuid: who steps run as (sandbox.uid), and who owns what the file tools make. The attack on
# the docker backend: write_file leaves a root-owned file that the next step (uid 1000) cannot
# change; GitHub's checkout belongs to uid 1001, which no step could write. Also: a file
# hard-linked from outside the workspace stays unchanged under docker. The namespace backend:
# steps see sandbox.uid inside, and the files stay the runner's own outside.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/dockerenv.sh"
export ASAN_OPTIONS=detect_leaks=0
trap 'docker_down; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
chmod 755 "$T"
[ -n "${KEEP:-}" ] && echo "T=$T"

manifest() { # FILE BACKEND EXTRA-SANDBOX-KEYS STEP-COMMANDS...
	local f=$1 backend=$2 extra=$3
	shift 3
	{
		printf 'version: 1\nworkspace: ws\nsandbox: { backend: %s%s }\n' "$backend" "$extra"
		printf 'models:\n  m:\n    provider: scripted\n    replies:\n'
		local s
		for s in "$@"; do printf '      - { tool_calls: [ %s ] }\n' "$s"; done
		printf '      - { tool_calls: [ { name: final_result, arguments: {} } ] }\n'
		printf 'workers:\n  w: { model: m, instructions: x, tools: [shell, write_file, edit_file], approval: { default: allow } }\n'
		printf 'jobs:\n  j: { worker: w }\n'
	} > "$f"
}
sh() { printf '{ name: shell, arguments: { command: "%s" } }' "$1"; }
wf() { printf '{ name: write_file, arguments: { path: %s, content: "%s" } }' "$1" "$2"; }
ef() { printf '{ name: edit_file, arguments: { path: %s, old: "%s", new: "%s" } }' "$1" "$2" "$3"; }
results() { zstd -dcq "$1/jobs/j/events.jsonl.zst" | python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e.get("type") == "tool_result" and "exit_code" in json.dumps(e):
        print(e.get("step"), e.get("exit_code", e.get("result", {}).get("exit_code")), json.dumps(e.get("stdout", e.get("output", "")))[:200])
'; }

# --- namespace: sandbox.uid is what steps see; outside, files are the runner's ---
if ! userns; then
	skip "stepuid/namespace" "user namespaces are not available here"
else
	mkdir -p "$T/ns/ws"
	manifest "$T/ns/m.yaml" namespace ', uid: "1001:1002"' \
		"$(sh 'id -u > ids; id -g >> ids')" \
		"$(wf made/by-tool.txt one)" \
		"$(sh 'echo two >> made/by-tool.txt && chmod 600 made/by-tool.txt && touch made/by-step')"
	dir=$("$NS" run "$T/ns/m.yaml" --out "$T/ns/runs" 2>"$T/ns/err"); rc=$?
	expect_rc "namespace with sandbox.uid: the run succeeds" 0 "$rc"
	expect_eq "steps run as 1001:1002 inside" "1001 1002" "$(tr '\n' ' ' < "$T/ns/ws/ids" | sed 's/ $//')"
	expect_eq "a later step changed the file write_file made" "onetwo" "$(cat "$T/ns/ws/made/by-tool.txt")"
	expect_eq "outside it is the runner's own" "$(id -u)" "$(stat -c %u "$T/ns/ws/made/by-tool.txt")"
	check "the later step made its file too" test -e "$T/ns/ws/made/by-step"
fi

# --- docker ---
if ! docker_up "$T"; then
	skip "stepuid/docker" "$DOCKER_WHY"
	done_tests
	exit
fi
if [ "$(id -u)" != 0 ]; then
	skip "stepuid/docker" "not root: the file tools cannot give their files to the steps' user"
	done_tests
	exit
fi
img=", image: $DOCKER_IMAGE, network: none, timeout: 20s"

# the default user, 1000: what write_file and edit_file make, a later step can change
mkdir -p "$T/d1/ws" && chmod 0777 "$T/d1/ws"
manifest "$T/d1/m.yaml" docker "$img" \
	"$(wf made/by-tool.txt one)" \
	"$(sh 'echo two >> made/by-tool.txt && chmod 600 made/by-tool.txt && touch made/by-step && id -u > made/id')"
dir=$("$NS" run "$T/d1/m.yaml" --out "$T/d1/runs" 2>"$T/d1/err"); rc=$?
expect_rc "docker, default user: the run succeeds" 0 "$rc"
expect_eq "write_file's file belongs to 1000:1000" "1000:1000" "$(stat -c %u:%g "$T/d1/ws/made/by-tool.txt")"
expect_eq "so does the folder it made" "1000:1000 755" "$(stat -c '%u:%g %a' "$T/d1/ws/made")"
expect_eq "the next step appended to it" "onetwo" "$(cat "$T/d1/ws/made/by-tool.txt")"
expect_eq "and changed its mode" 600 "$(stat -c %a "$T/d1/ws/made/by-tool.txt")"
check "and made a file beside it" test -e "$T/d1/ws/made/by-step"
expect_eq "the step ran as 1000" 1000 "$(cat "$T/d1/ws/made/id" 2>/dev/null)"

# a checkout owned by 1001 (GitHub's runner user), writable by it alone: sandbox.uid: 1001
mkdir -p "$T/d2/ws" && echo "v1" > "$T/d2/ws/checkout.txt"
chown -R 1001:1001 "$T/d2/ws" && chmod 0755 "$T/d2/ws"
manifest "$T/d2/m.yaml" docker "$img, uid: 1001" \
	"$(sh 'id -u > uid.txt')" \
	"$(wf notes/new.txt fresh)" \
	"$(ef checkout.txt v1 v2)" \
	"$(sh 'echo more >> notes/new.txt && echo v3 >> checkout.txt && mkdir d && touch d/f')"
dir=$("$NS" run "$T/d2/m.yaml" --out "$T/d2/runs" 2>"$T/d2/err"); rc=$?
expect_rc "docker, uid 1001: the run succeeds" 0 "$rc"
expect_eq "steps ran as 1001" 1001 "$(cat "$T/d2/ws/uid.txt" 2>/dev/null)"
expect_eq "write_file's file belongs to 1001" "1001:1001" "$(stat -c %u:%g "$T/d2/ws/notes/new.txt")"
expect_eq "edit_file kept the checkout's owner" "1001:1001" "$(stat -c %u:%g "$T/d2/ws/checkout.txt")"
expect_eq "a later step changed both" "freshmore|v2
v3" "$(cat "$T/d2/ws/notes/new.txt")|$(cat "$T/d2/ws/checkout.txt")"
check "and made a folder in the checkout" test -e "$T/d2/ws/d/f"
expect_grep "the limits line names the user" "uid 1001:1001" <(zstd -dcq "$dir/jobs/j/events.jsonl.zst")

# a file hard-linked from outside: read-only in docker steps too
mkdir -p "$T/d3/ws" "$T/d3/outside" && chmod 0777 "$T/d3/ws"
echo original > "$T/d3/outside/store.py" && chmod 0666 "$T/d3/outside/store.py"
ln "$T/d3/outside/store.py" "$T/d3/ws/vendored.py"
manifest "$T/d3/m.yaml" docker "$img" \
	"$(sh 'echo PWNED > vendored.py; printf more >> vendored.py; rm -f vendored.py; echo done')"
dir=$("$NS" run "$T/d3/m.yaml" --out "$T/d3/runs" 2>"$T/d3/err"); rc=$?
expect_rc "docker, a hard-linked file: the run succeeds" 0 "$rc"
expect_eq "the file outside is unchanged" original "$(cat "$T/d3/outside/store.py")"
expect_grep "the warning names it" "warning: 1 workspace file has hard links outside the workspace \(vendored.py\)" "$T/d3/err"
done_tests
