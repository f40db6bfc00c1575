#!/usr/bin/env bash
# run --resume: a failed night resumed reruns only the failed job and what needs it, carries the
# rest over byte for byte, verifies on its own and names its origin; --from and --resume exit by
# the outcome of the whole (a run that ran nothing because its jobs failed elsewhere is no success).
source "$(dirname "$0")/lib.sh"
mkdir -p "$T/ws"
echo start > "$T/ws/state"
cat > "$T/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  scan:
    provider: scripted
    replies:
      - tool_calls: [ {name: shell, arguments: {command: "echo scanned >> state; mkdir -p scan; echo 1 > scan/a"}} ]
      - tool_calls: [ {name: final_result, arguments: {found: 3}} ]
  plan: { provider: scripted, script: plan.yaml }
  done: { provider: scripted, replies: [ {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  scanner: { model: scan, instructions: x, tools: [shell], approval: { default: allow } }
  planner: { model: plan, instructions: x, tools: [shell], approval: { default: allow }, max_turns: 3 }
  reporter: { model: done, instructions: x }
jobs:
  scan: { worker: scanner }
  other: { worker: reporter }
  plan: { worker: planner, needs: [scan], input: "found ${{ jobs.scan.output.found }}" }
  report: { worker: reporter, needs: [plan] }
YAML
# The first night the planner never gives a result; the next it does.
cat > "$T/plan.yaml" <<'YAML'
- tool_calls: [ {name: shell, arguments: {command: "echo planned-badly >> state; rm -rf scan"}} ]
- text: "I give up"
- text: "still nothing"
YAML
js() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); v=r
for k in sys.argv[2:]: v=v.get(k, {}) if isinstance(v, dict) else {}
print(v if v != {} else "")' "$@"; }
night=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the night fails" 1 "$rc"
expect_eq "plan failed" failed "$(js "$night/run.json" jobs plan status)"
expect_eq "report skipped" skipped "$(js "$night/run.json" jobs report status)"
expect_eq "scan succeeded" succeeded "$(js "$night/run.json" jobs scan status)"

# --from: the failed job is taken, nothing runs, and that is no success.
dir=$("$NS" run "$T/m.yaml" --from "$night" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "--from a failed night: exit 1" 1 "$rc"
expect_eq "and run.json says failed" failed "$(js "$dir/run.json" status)"
expect_grep "saying which job failed where" "job plan: failed in run .*taken with --from, not run here \(--resume reruns it\)" "$T/err"
dir=$("$NS" run "$T/m.yaml" --job plan --from "$night" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "--job plan --from a night where plan failed: exit 1" 1 "$rc"
dir=$("$NS" run "$T/m.yaml" --job other --from "$night" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "--job other --from: other ran, nothing it needs failed: exit 0" 0 "$rc"

# --resume: only plan and report run; scan and other are carried over.
cat > "$T/plan.yaml" <<'YAML'
- tool_calls: [ {name: shell, arguments: {command: "echo planned >> state; echo p > plan.txt"}} ]
- tool_calls: [ {name: final_result, arguments: {steps: 2}} ]
YAML
echo between > "$T/ws/between" # changed between the night and its resume: no step's change
cp -a "$T/ws" "$T/ws-before-resume"
res=$("$NS" run "$T/m.yaml" --resume "$night" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the resumed night succeeds" 0 "$rc"
expect_eq "only the failed job and its dependant ran" "plan report" \
	"$(grep -o 'job [a-z]*: started' "$T/err" | awk '{print $2}' | tr -d : | sort | tr '\n' ' ' | sed 's/ $//')"
expect_grep "the others are said to be carried over" "job scan: carried over" "$T/err"
expect_eq "status" succeeded "$(js "$res/run.json" status)"
expect_eq "origin names the night" "$(js "$night/run.json" run_id)" "$(js "$res/run.json" origin run_id)"
expect_eq "scan carried from the night" "$(js "$night/run.json" run_id)" "$(js "$res/run.json" jobs scan carried_from)"
expect_eq "plan ran here" succeeded "$(js "$res/run.json" jobs plan status)"
expect_eq "report ran here" succeeded "$(js "$res/run.json" jobs report status)"
check "scan's events are the night's, byte for byte" cmp "$night/jobs/scan/events.jsonl.zst" "$res/jobs/scan/events.jsonl.zst"
check "scan's output too" cmp "$night/jobs/scan/output.json" "$res/jobs/scan/output.json"
check "plan got scan's output" bash -c "zstd -dcq '$res/jobs/plan/events.jsonl.zst' | head -1 | grep -q '\"input\":\"found 3\"'"
check "the resumed run verifies on its own" "$NS" audit "$res" --verify
check "and as an archive" bash -c "tar --zstd -cf '$T/res.tar.zst' -C '$(dirname "$res")' '$(basename "$res")' && '$NS' audit '$T/res.tar.zst' --verify"
last=$(js "$res/run.json" origin last_step)
pstep=$(zstd -dcq "$res/jobs/plan/events.jsonl.zst" | python3 -c 'import json,sys; print(min(e["step"] for e in map(json.loads, sys.stdin) if e["type"] == "snapshot"))')
check "steps count on after the night's last ($last)" test "$pstep" -gt "$last"
# Layers: the night's carried (restore before its step 1), and the resumed run's own chain.
rm -rf "$T/r"; "$NS" restore "$res" --step 1 --to "$T/r" 2>/dev/null
check "before the night's step 1: the workspace as the night began" bash -c "[ \"\$(cat '$T/r/state')\" = start ] && [ ! -e '$T/r/scan' ]"
rm -rf "$T/r"; "$NS" restore "$res" --step "$pstep" --to "$T/r" 2>/dev/null
check "before the resumed plan's step: the workspace as the resume began" diff -r "$T/ws-before-resume" "$T/r"
rm -rf "$T/r"; "$NS" restore "$res" --step end --to "$T/r" 2>/dev/null
check "end: the workspace now" diff -r "$T/ws" "$T/r"

# diff and the report: the night's last step is what it changed there (the night's end layer is
# carried as NNNN.end.tar.zst), what changed between the runs is said as such, not as a step's.
check "the night's end carried as $(printf %04d "$last").end.tar.zst" cmp "$night/snapshots/end.tar.zst" "$res/snapshots/$(printf %04d "$last").end.tar.zst"
"$NS" diff "$night" --step "$last" > "$T/d.night" 2>&1
"$NS" diff "$res" --step "$last" > "$T/d.res" 2>&1
expect_grep "the night's last step deleted scan" '^D scan ' "$T/d.night"
check "the resumed run's diff of that step is the night's, change for change" diff <(grep -v '^#' "$T/d.night") <(grep -v '^#' "$T/d.res")
expect_nogrep "and holds nothing done between the runs" 'between' "$T/d.res"
"$NS" report "$res" --out "$T/res.html" 2>/dev/null
check "the report says what changed between the runs, before the resumed run's first step" \
	grep -q "Workspace changes between the run resumed and this run's first layer, before step $pstep: 1<" "$T/res.html"
# A chain that begins again with a full layer and nothing before it (the end layer gone):
# the full layer is compared with the state before it, deletions included, and said to be so.
cp -a "$res" "$T/cut"
rm "$T/cut/snapshots/$(printf %04d "$last").end.tar.zst"
grep -v "end\.tar\.zst$" "$res/SHA256SUMS" | grep -v "$(printf %04d "$last")\.end" > "$T/cut/SHA256SUMS"
grep " snapshots/end\.tar\.zst$" "$res/SHA256SUMS" >> "$T/cut/SHA256SUMS"
"$NS" diff "$T/cut" --step "$last" > "$T/d.cut" 2>&1
expect_grep "the step's diff says the chain began again with a full layer" "^# step $last: what changed in step $last and until the chain began again with a full layer before step $pstep" "$T/d.cut"
expect_grep "the deletion is there (a full layer holds no whiteouts)" '^D scan ' "$T/d.cut"
expect_grep "and what changed between the runs" '^\+\+\+ b/between' "$T/d.cut"

# Resuming a night that succeeded runs nothing and succeeds; a tampered one is refused.
again=$("$NS" run "$T/m.yaml" --resume "$res" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "resuming a run that succeeded: exit 0" 0 "$rc"
check "nothing started" bash -c "! grep -q ': started' '$T/err'"
check "it verifies" "$NS" audit "$again" --verify
echo '{}' > "$night/jobs/scan/output.json"
out=$("$NS" run "$T/m.yaml" --resume "$night" --out "$T/runs" 2>&1); rc=$?
expect_rc "a tampered night: exit 2" 2 "$rc"
case "$out" in *"--resume"*) _pass=$((_pass + 1)) ;; *) _fail=$((_fail + 1)); echo "FAIL names --resume: $out" ;; esac
out=$("$NS" run "$T/m.yaml" --resume "$res" --from "$res" --out "$T/runs" 2>&1); rc=$?
expect_rc "--resume with --from: exit 2" 2 "$rc"
# Two jobs on their own workspaces, one fails: the resumed run keeps a chain per workspace, the
# carried job's workspace included, each ending in its own end layer.
mkdir -p "$T/w2/a" "$T/w2/b" "$T/w2/runs"
echo a > "$T/w2/a/f"; echo b > "$T/w2/b/f"
cat > "$T/w2/m.yaml" <<'YAML'
version: 1
workspace: .
models:
  ok:
    provider: scripted
    replies:
      - tool_calls: [ {name: shell, arguments: {command: "echo x >> f"}} ]
      - tool_calls: [ {name: final_result, arguments: {}} ]
  bad: { provider: scripted, script: bad.yaml }
workers:
  w1: { model: ok, instructions: x, tools: [shell], approval: { default: allow } }
  w2: { model: bad, instructions: x, tools: [shell], approval: { default: allow }, max_turns: 2 }
jobs:
  ja: { worker: w1, workspace: a }
  jb: { worker: w2, workspace: b }
YAML
echo '[ {tool_calls: [ {name: shell, arguments: {command: "echo y >> f"}} ]}, {text: no}, {text: no} ]' > "$T/w2/bad.yaml"
n2=$("$NS" run "$T/w2/m.yaml" --out "$T/w2/runs" 2>"$T/err"); rc=$?
expect_rc "a night with jb failing on its own workspace" 1 "$rc"
echo '[ {tool_calls: [ {name: final_result, arguments: {}} ]} ]' > "$T/w2/bad.yaml"
r2=$("$NS" run "$T/w2/m.yaml" --resume "$n2" --out "$T/w2/runs" 2>"$T/err"); rc=$?
expect_rc "resumed" 0 "$rc"
check "a chain per workspace, each with its end layer, none at the top" bash -c "test -f '$r2/snapshots/a/end.tar.zst' -a -f '$r2/snapshots/b/end.tar.zst' -a ! -e '$r2/snapshots/end.tar.zst'"
check "it verifies" "$NS" audit "$r2" --verify
rm -rf "$T/r"; "$NS" restore "$r2" --step end --workspace a --to "$T/r" 2>/dev/null
check "the carried job's workspace at the end" diff -r "$T/w2/a" "$T/r"
rm -rf "$T/r"; "$NS" restore "$r2" --step 1 --workspace a --to "$T/r" 2>/dev/null
check "and before its carried step" bash -c "[ \"\$(cat '$T/r/f')\" = a ]"
# A night that ran one workspace (its chain in snapshots/ itself), resumed into a run of two: the
# carried chain stays closed by the night's end layer, each workspace starts its own.
printf 'a\n' > "$T/w2/a/f"
n3=$("$NS" run "$T/w2/m.yaml" --job ja --out "$T/w2/runs" 2>"$T/err"); rc=$?
expect_rc "a night of ja alone" 0 "$rc"
check "its one chain is in snapshots/ itself" test -f "$n3/snapshots/0001.tar.zst" -a -f "$n3/snapshots/end.tar.zst"
echo between >> "$T/w2/a/f"
r3=$("$NS" run "$T/w2/m.yaml" --resume "$n3" --out "$T/w2/runs" 2>"$T/err"); rc=$?
expect_rc "resumed: jb runs" 0 "$rc"
check "the night's chain closed by its end, a chain per workspace beside it" bash -c "cmp -s '$n3/snapshots/end.tar.zst' '$r3/snapshots/end.tar.zst' && test -f '$r3/snapshots/a/end.tar.zst' -a -f '$r3/snapshots/b/end.tar.zst'"
check "it verifies" "$NS" audit "$r3" --verify
rm -rf "$T/r"; "$NS" restore "$r3" --step end --workspace a --to "$T/r" 2>/dev/null
check "a's end: a now" diff -r "$T/w2/a" "$T/r"
"$NS" diff "$r3" --step 1 > "$T/d3" 2>&1
check "ja's step diffs as in the night, without what changed between the runs" bash -c "grep -qx '+x' '$T/d3' && ! grep -q between '$T/d3'"
done_tests
