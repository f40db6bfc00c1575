#!/usr/bin/env bash
# prune: old run directories go, and only they. Never the newest; never one a live runner still
# writes (it holds an flock on its folder from the moment the folder has its name); never what is
# not a run directory (a symlink named like a run, a hidden or half-made folder, a plain folder, a
# file). A run directory given as DIR is refused. --older-than by the time in the run's name;
# --dry-run removes nothing. finalize refuses a live run too.
source "$(dirname "$0")/lib.sh"
needuserns prune
runs=$T/runs
mkrun() { mkdir -p "$runs/$1/jobs" "$runs/$1/snapshots"; echo '{}' >"$runs/$1/run.json"; }
mkrun 20200101T000000Z-aaaa
mkrun 20200102T000000Z-bbbb
mkrun 20991230T000000Z-cccc
mkrun 20991231T000000Z-dddd
mkdir -p "$runs/notes" "$runs/.20200101T000000Z-eeee.new/jobs" "$T/elsewhere/20190101T000000Z-ffff/jobs"
echo keep >"$runs/README"
echo '<html>' >"$runs/20200101T000000Z-aaaa.html"                # its report goes with it
echo '<html>' >"$T/elsewhere/other.html"
ln -s "$T/elsewhere/other.html" "$runs/20200102T000000Z-bbbb.html" # a link named so stays
ln -s "$T/elsewhere/20190101T000000Z-ffff" "$runs/20190101T000000Z-ffff"

# a live run, older by name than the two of 2099: its step waits for a file the test makes
mkdir -p "$T/ws"
cat >"$T/m.yaml" <<YAML
version: 1
workspace: ws
models:
  s: { provider: scripted, replies: [
    {tool_calls: [ {name: shell, arguments: {command: "while [ ! -e go ]; do sleep 0.05; done # nsprune$$"}} ]},
    {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: s, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
"$NS" run "$T/m.yaml" --out "$runs" >"$T/live" 2>"$T/err" &
LIVE=$!
others="20200101T000000Z-aaaa|20200102T000000Z-bbbb|20991230T000000Z-cccc|20991231T000000Z-dddd|20190101T000000Z-ffff"
liverun() { ls -d "$runs"/20*Z-*/ 2>/dev/null | sed 's|/$||' | grep -Ev "/($others)$"; }
waitfor 60 liverun >/dev/null
live=$(liverun)
waitfor 60 test -e "$live/snapshots/0001.tar.zst"
expect_eq "the live run is in the runs folder" "$runs" "$(dirname "$live")"

"$NS" prune "$live" --keep 1 >/dev/null 2>"$T/p0"
expect_rc "a run directory as DIR is refused" 2 $?
"$NS" prune "$runs" >/dev/null 2>&1
expect_rc "prune without --keep or --older-than is a usage error" 2 $?
"$NS" prune "$runs" --keep 0 >/dev/null 2>&1
expect_rc "--keep 0 is refused (the newest always stays)" 2 $?
"$NS" finalize "$live" >/dev/null 2>"$T/f"
expect_rc "finalize refuses a live run" 2 $?

"$NS" prune "$runs" --keep 1 --dry-run >"$T/dry" 2>&1
expect_rc "a dry run" 0 $?
expect_eq "a dry run removes nothing (four made, one live)" 5 "$(ls -d "$runs"/20*Z-*/ | grep -vc ffff)"

"$NS" prune "$runs" --older-than 30d >"$T/p1" 2>"$T/e1"
expect_rc "--older-than 30d" 0 $?
expect_eq "only the runs of 2020 go, and the report beside one" "$runs/20200101T000000Z-aaaa
$runs/20200101T000000Z-aaaa.html
$runs/20200102T000000Z-bbbb" "$(LC_ALL=C sort "$T/p1")"
check "the report is gone" test ! -e "$runs/20200101T000000Z-aaaa.html"
check "a link named like a report stays, and what it leads to" test -L "$runs/20200102T000000Z-bbbb.html" -a -f "$T/elsewhere/other.html"
check "the runs of 2099 stay" test -d "$runs/20991230T000000Z-cccc"

"$NS" prune "$runs" --keep 1 >"$T/p2" 2>"$T/e2"
expect_rc "--keep 1" 0 $?
expect_eq "the older run of 2099 goes, the newest stays" "$runs/20991230T000000Z-cccc" "$(cat "$T/p2")"
check "the newest stays" test -d "$runs/20991231T000000Z-dddd"
check "the live run stays" test -d "$live"
expect_grep "and prune says it is in use" "in use by a live run" "$T/e2"
check "a symlink named like a run is left alone" test -L "$runs/20190101T000000Z-ffff"
check "and what it leads to" test -d "$T/elsewhere/20190101T000000Z-ffff/jobs"
check "a half-made hidden run is left alone" test -d "$runs/.20200101T000000Z-eeee.new"
check "a plain folder is left alone" test -d "$runs/notes"
check "a file is left alone" test -f "$runs/README"

touch "$T/ws/go"
wait "$LIVE"
expect_rc "the live run ends" 0 $?
"$NS" prune "$runs" --keep 1 >"$T/p3" 2>&1
expect_eq "once it has ended, it goes" "$live" "$(cat "$T/p3" | grep -v '^nightshift:')"
expect_eq "what is left: the newest and what is no run" "$runs/.20200101T000000Z-eeee.new $runs/20190101T000000Z-ffff $runs/20200102T000000Z-bbbb.html $runs/20991231T000000Z-dddd $runs/README $runs/notes" \
	"$(ls -A "$runs" | LC_ALL=C sort | sed "s|^|$runs/|" | tr '\n' ' ' | sed 's/ $//')"
done_tests
