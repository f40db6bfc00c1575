#!/usr/bin/env bash
# setupretry: a namespace sandbox whose set-up fails for a reason the machine does not always give
# (the kernel refusing for a moment) is set up once more before the job fails; the step's result
# says what the first try met. A set-up that fails twice fails the job with the cause; at run's
# check before anything runs, it stops the run (exit 2). Simulated by tests/fixtures/failsetup.c,
# preloaded into nightshift. The first set-up is run's own check, the next ones the job's.
source "$(dirname "$0")/lib.sh"
needuserns setupretry
cc -shared -fPIC -o "$T/failsetup.so" "$ROOT/tests/fixtures/failsetup.c" 2>"$T/cc.err" || cat "$T/cc.err"
check "the shim builds" test -f "$T/failsetup.so"
mkdir -p "$T/ws"
cat > "$T/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  s: { provider: scripted, replies: [ {tool_calls: [ {name: shell, arguments: {command: "echo ran > out"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: s, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
# Under ASan the shim must come after the sanitizer's runtime.
pre=$T/failsetup.so
asan=$(ldd "$NS" 2>/dev/null | awk '/libasan/ {print $3}')
[ -n "$asan" ] && pre="$asan:$pre"

dir=$(FAILSETUP_LOG="$T/once.log" FAILSETUP_PLAN=01 LD_PRELOAD=$pre "$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "a set-up that fails once: the job succeeds" 0 "$rc"; [ "$rc" = 0 ] || cat "$T/err"
expect_eq "the check's set-up, then the job's twice" 3 "$(wc -l <"$T/once.log" 2>/dev/null)"
expect_eq "the step ran once" "ran" "$(cat "$T/ws/out" 2>/dev/null)"
zstd -dcq "$dir/jobs/j/events.jsonl.zst" >"$T/ev" 2>/dev/null
expect_grep "the step's result says what the first try met" '"sandbox_note":"the sandbox set-up failed once, then worked: .*sethostname' "$T/ev"
check "the run verifies" "$NS" audit "$dir" --verify

rm -f "$T/ws/out"
FAILSETUP_LOG="$T/job.log" FAILSETUP_PLAN=011 LD_PRELOAD=$pre "$NS" run "$T/m.yaml" --out "$T/runs" >/dev/null 2>"$T/err2"; rc=$?
expect_rc "a job whose set-up fails twice fails" 1 "$rc"
expect_eq "tried twice, no more" 3 "$(wc -l <"$T/job.log" 2>/dev/null)"
expect_grep "the cause is named" "job j: failed.*sethostname" "$T/err2"
check "no step ran" test ! -e "$T/ws/out"
n=$(ls "$T/runs" | wc -l)
FAILSETUP_LOG="$T/always.log" FAILSETUP_PLAN=11 LD_PRELOAD=$pre "$NS" run "$T/m.yaml" --out "$T/runs" >/dev/null 2>"$T/err4"; rc=$?
expect_rc "a set-up that fails twice at run's check: nothing runs" 2 "$rc"
expect_eq "tried twice at the check" 2 "$(wc -l <"$T/always.log" 2>/dev/null)"
expect_grep "the check names the cause" "sethostname" "$T/err4"
expect_eq "no run directory is made" "$n" "$(ls "$T/runs" | wc -l)"

# Without the shim: one set-up, no note.
dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err3"); rc=$?
expect_rc "a plain run" 0 "$rc"
zstd -dcq "$dir/jobs/j/events.jsonl.zst" >"$T/ev3" 2>/dev/null
expect_nogrep "no note when nothing went wrong" "sandbox_note" "$T/ev3"
done_tests
