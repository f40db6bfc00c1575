#!/usr/bin/env bash
# replay never takes a limit from the record that is weaker than the defaults: a stranger's run
# archive with memory 64G, pids 100000, a step timeout of 1h, limits: warn and a snapshot max_size
# of 1T is replayed with the defaults' (and says so); a record's tighter limits are kept, and
# --manifest FILE (the user's own) is taken as it is.
source "$(dirname "$0")/lib.sh"
needuserns replaylimits
mkdir -p "$T/p"
manifest() {
	cat > "$T/p/m.yaml" <<YAML
version: 1
workspace: .
sandbox: { $1 }
snapshot: { $2 }
models:
  d:
    provider: scripted
    replies:
      - tool_calls: [ {name: shell, arguments: {command: "echo hi"}} ]
      - tool_calls: [ {name: final_result, arguments: {}} ]
workers:
  w: { model: d, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
}
manifest "memory: 64G, pids: 100000, timeout: 1h, limits: warn" "max_size: 1T"
run=$("$NS" run "$T/p/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the night with loose limits runs" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
new=$("$NS" replay "$run" --out "$T/replays" 2>"$T/rerr"); rc=$?
expect_rc "its replay" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/rerr"
expect_grep "the record's memory limit is not taken" "sandbox: the record's memory limit \(68719476736\) is not taken; replaying with the default's, 1073741824" "$T/rerr"
expect_grep "nor its pids limit" "the record's pids limit \(100000\) is not taken; replaying with the default's, 256" "$T/rerr"
expect_grep "nor its step timeout" "the record's step timeout in ms \(3600000\) is not taken; replaying with the default's, 120000" "$T/rerr"
expect_grep "nor limits: warn" "the record's limits: warn is not taken" "$T/rerr"
expect_grep "nor its snapshot max_size" "snapshot: the record's max_size \(1099511627776\) is not taken" "$T/rerr"

# no limit at all (0) is the loosest of all
manifest "memory: 0" "max_size: 2G"
run=$("$NS" run "$T/p/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "a night with no memory limit" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
new=$("$NS" replay "$run" --out "$T/replays" 2>"$T/rerr"); rc=$?
expect_rc "its replay" 0 "$rc"
expect_grep "no memory limit is not taken" "the record's memory limit \(none: 0\) is not taken" "$T/rerr"

# tighter than the defaults: kept, nothing said
manifest "memory: 512M, pids: 64, timeout: 30s" "max_size: 1G"
run=$("$NS" run "$T/p/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
new=$("$NS" replay "$run" --out "$T/replays" 2>"$T/rerr"); rc=$?
expect_rc "a record with tighter limits replays" 0 "$rc"
expect_nogrep "and none of them is replaced" "is not taken" "$T/rerr"

# --manifest FILE is the user's own: taken as written
manifest "memory: 64G, pids: 100000, timeout: 1h" "max_size: 1T"
run=$("$NS" run "$T/p/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
new=$("$NS" replay "$run" --manifest "$T/p/m.yaml" --out "$T/replays" 2>"$T/rerr"); rc=$?
expect_rc "replay --manifest FILE" 0 "$rc"
expect_nogrep "takes its limits as written" "is not taken" "$T/rerr"
done_tests
