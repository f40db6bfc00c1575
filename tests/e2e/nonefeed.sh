#!/usr/bin/env bash
# nonefeed: a run whose steps all use the none backend takes the change feed's word for what
# changed (its layers say "scan":"feed"), as no process of a step outlives it: the step's keeper
# kills what it left, a process that escaped its group with setsid included, before the next
# layer. A step that kills its keeper leaves that unknown: its result says "leftover" and the
# layers after it stat every entry. The end layer reads the feed and holds the last step's change.
source "$(dirname "$0")/lib.sh"
command -v zstd >/dev/null || { skip nonefeed "zstd is not installed"; done_tests; exit; }
command -v setsid >/dev/null || { skip nonefeed "setsid is not installed"; done_tests; exit; }
mkdir -p "$T/ws/src" && echo 1 > "$T/ws/src/a"
# Each step waits until its process is out of the group (it made "up"), or the group's kill may
# take it before its setsid.
sh1='setsid sh -c "echo > up; sleep 1; echo late > late.txt" </dev/null >/dev/null 2>&1 & while [ ! -e up ]; do sleep 0.05; done'
sh2='sleep 2; echo two > two.txt'
sh3='echo three >> two.txt; echo 2 > src/a'
manifest() { # workspace, then the first step's command
	cat <<YAML
version: 1
workspace: $1
sandbox: { backend: none }
models:
  m:
    provider: scripted
    replies:
      - tool_calls: [ { name: shell, arguments: { command: '$2' } } ]
      - tool_calls: [ { name: shell, arguments: { command: '$sh2' } } ]
      - tool_calls: [ { name: shell, arguments: { command: '$sh3' } } ]
      - tool_calls: [ { name: final_result, arguments: {} } ]
workers:
  w: { model: m, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
}
manifest ws "$sh1" >"$T/m.yaml"
dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the run succeeds" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
ev() { zstd -dcq "$dir/jobs/$1/events.jsonl.zst"; }
ev j | grep '"type":"snapshot"' >"$T/snaps"
fs=$(stat -f -c %T "$T/ws")
case $fs in
ext2/ext3 | xfs | btrfs | tmpfs | f2fs) feed=1 ;;
*) feed=0 ;;
esac
if [ "$feed" = 1 ]; then
	expect_grep "a none-only run's layers read the change feed" '"step":3,.*"scan":"feed"' "$T/snaps"
else
	skip "none with the change feed" "no feed on $fs"
fi
check "the process that escaped step 1 with setsid did not outlive it" test ! -e "$T/ws/late.txt"
expect_eq "step 2's file is there" "$(printf 'two\nthree')" "$(cat "$T/ws/two.txt")"
end=$dir/snapshots/end.tar.zst
check "the end layer is written" test -s "$end"
expect_eq "the end layer holds the last step's change (from the feed)" "$(printf 'two\nthree')" \
	"$(zstd -dcq "$end" | tar -xOf - two.txt 2>/dev/null)"
expect_eq "and the other file it changed" 2 "$(zstd -dcq "$end" | tar -xOf - src/a 2>/dev/null)"

# A step that kills its keeper: what it started may live on, so the feed is dropped.
mkdir -p "$T/ws2"
sh1='setsid sh -c "echo > up; sleep 1; echo sneaky > sneak.txt" </dev/null >/dev/null 2>&1 & while [ ! -e up ]; do sleep 0.05; done; kill -9 $PPID'
manifest ws2 "$sh1" >"$T/m2.yaml"
dir=$("$NS" run "$T/m2.yaml" --out "$T/runs2" 2>"$T/err2"); rc=$?
expect_rc "the second run ends" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err2"
ev j | grep '"type":"tool_result"' >"$T/res2"
ev j | grep '"type":"snapshot"' >"$T/snaps2"
expect_grep "the step that killed its keeper is said to have left processes" '"step":1,.*"leftover":true|"leftover":true.*"step":1' "$T/res2"
expect_grep "the layers after it stat every entry" '"step":3,.*"scan":"stat"' "$T/snaps2"
expect_nogrep "none of them reads the feed" '"scan":"feed"' "$T/snaps2"
expect_grep "what the survivor wrote is in the layer before step 3" '^sneak\.txt$' <(zstd -dcq "$dir/snapshots/0003.tar.zst" | tar -tf -)
check "the survivor wrote its file" test -s "$T/ws2/sneak.txt"

# A step out of time: the keeper, told by the runner, kills the shell and the escaped process.
mkdir -p "$T/ws3"
sh1='setsid sh -c "echo > up; sleep 2; echo late > late.txt" </dev/null >/dev/null 2>&1 & while [ ! -e up ]; do sleep 0.05; done; sleep 30'
manifest ws3 "$sh1" | sed 's/sandbox: { backend: none }/sandbox: { backend: none, timeout: 1s }/' >"$T/m3.yaml"
t0=$(date +%s)
dir=$("$NS" run "$T/m3.yaml" --out "$T/runs3" 2>"$T/err3"); rc=$?
expect_rc "the run with a step out of time ends" 0 "$rc"
ev j | grep '"type":"tool_result"' >"$T/res3"
expect_grep "step 1 ran out of time" '"timed_out":true' "$T/res3"
expect_nogrep "and left nothing the keeper did not kill" '"leftover":true' "$T/res3"
check "the run did not wait for the step's 30 s" test $(($(date +%s) - t0)) -lt 20
check "the process that escaped the timed-out step is gone" test ! -e "$T/ws3/late.txt"
done_tests
