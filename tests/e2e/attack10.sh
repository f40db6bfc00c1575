#!/usr/bin/env bash
# attack10: hostile steps against today's write_file in place and the none backend's keeper.
# 1. A file bound over a workspace name (mount --bind, as root) is not written through by
#    write_file: the in-place write crossed the mount into the file outside.
# 2. A step that stops its keeper (kill -STOP $PPID) does not hang the runner past the timeout,
#    and its result says leftover.
# 3. A step that writes a forged record into its keeper's pipe (/proc/$PPID/fd) and then kills
#    it is still said to have left processes (the feed is not trusted after it).
# 4. A step cannot write into the runner's stdout or stderr through its keeper's descriptors.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
command -v zstd >/dev/null || { skip attack10 "zstd is not installed"; done_tests; exit; }
manifest() { # workspace, timeout, then one tool call per argument (YAML flow maps)
	local ws=$1 to=$2
	shift 2
	printf 'version: 1\nworkspace: %s\nsandbox: { backend: none, timeout: %s }\n' "$ws" "$to"
	printf 'models:\n  m:\n    provider: scripted\n    replies:\n'
	for c in "$@"; do printf '      - { tool_calls: [ %s ] }\n' "$c"; done
	printf '      - { tool_calls: [ { name: final_result, arguments: {} } ] }\n'
	printf 'workers:\n  w: { model: m, instructions: x, tools: [shell, write_file], approval: { default: allow } }\n'
	printf 'jobs:\n  j: { worker: w }\n'
}
ev() { zstd -dcq "$1/jobs/j/events.jsonl.zst"; }

# 1. bind mount at the final name
mkdir -p "$T/out1" "$T/ws1"
echo original >"$T/out1/secret"
echo x >"$T/ws1/f"
if [ "$(id -u)" = 0 ] && mount --bind "$T/out1/secret" "$T/ws1/f" 2>/dev/null; then
	manifest ws1 30s '{ name: write_file, arguments: { path: f, content: PWNED } }' >"$T/m1.yaml"
	dir=$("$NS" run "$T/m1.yaml" --out "$T/runs1" 2>"$T/err1"); rc=$?
	umount "$T/ws1/f"
	expect_rc "the run with a file bound over f ends" 0 "$rc"
	expect_eq "the file outside is unchanged" original "$(cat "$T/out1/secret")"
	expect_grep "write_file f failed" '"exit_code":1' <(ev "$dir" | grep '"type":"tool_result"')
else
	skip "bind mount at the name" "needs root and mount"
fi

# 2. the keeper stopped
mkdir -p "$T/ws2"
manifest ws2 2s '{ name: shell, arguments: { command: "kill -STOP $PPID; echo hi" } }' >"$T/m2.yaml"
t0=$(date +%s)
dir=$(timeout -s KILL 30 "$NS" run "$T/m2.yaml" --out "$T/runs2" 2>"$T/err2"); rc=$?
expect_rc "the run whose step stopped its keeper ends" 0 "$rc"
check "within its time and a grace" test $(($(date +%s) - t0)) -lt 15
[ "$rc" = 0 ] && expect_grep "the step is said to have left processes" '"leftover":true' \
	<(ev "$dir" | grep '"type":"tool_result"')

# 3. a forged record, then the keeper killed
mkdir -p "$T/ws3"
sh3='for f in /proc/$PPID/fd/*; do printf "\\0\\0\\0\\0" >$f 2>/dev/null; done; kill -9 $PPID'
manifest ws3 30s "{ name: shell, arguments: { command: '$sh3' } }" >"$T/m3.yaml"
dir=$(timeout -s KILL 30 "$NS" run "$T/m3.yaml" --out "$T/runs3" 2>"$T/err3"); rc=$?
expect_rc "the run whose step forged its record ends" 0 "$rc"
[ "$rc" = 0 ] && expect_grep "the step is still said to have left processes" '"leftover":true' \
	<(ev "$dir" | grep '"type":"tool_result"')

# 4. the runner's stdout and stderr through the keeper
mkdir -p "$T/ws4"
sh4='echo FAKE$((1 + 1))DIR >/proc/$PPID/fd/1; echo FAKE$((1 + 1))ERR >/proc/$PPID/fd/2; true'
manifest ws4 30s "{ name: shell, arguments: { command: '$sh4' } }" >"$T/m4.yaml"
timeout -s KILL 30 "$NS" run "$T/m4.yaml" --out "$T/runs4" >"$T/out4" 2>"$T/err4"; rc=$?
expect_rc "the run whose step wrote to its keeper's stdio ends" 0 "$rc"
expect_nogrep "the runner's stdout holds only its own words" FAKE2DIR "$T/out4"
expect_nogrep "nor its stderr (the command's text is shown, not what it wrote)" FAKE2ERR "$T/err4"
done_tests
