#!/usr/bin/env bash
# A matrix whose values come from a needed job's output (a JSON list), made when that job has
# finished: ids as for any matrix (usable with --job), a workspace and a chain per member, and a
# job whose output is not a list failing the matrix job with the reason.
source "$(dirname "$0")/lib.sh"
mkdir -p "$T/top/runs"
for r in alpha beta gamma; do
	mkdir -p "$T/top/repos/$r"
	echo "$r" > "$T/top/repos/$r/name"
done
cp -a "$T/top/repos" "$T/orig"
manifest() { # the scan job's final_result arguments (JSON)
	cat > "$T/top/m.yaml" <<YAML
version: 1
workspace: .
models:
  scan: { provider: scripted, replies: [ {tool_calls: [ {name: final_result, arguments: $1} ]} ] }
  fix:
    provider: scripted
    replies:
      - tool_calls: [ {name: shell, arguments: {command: "echo fixed >> name"}} ]
      - tool_calls: [ {name: final_result, arguments: {}} ]
  sum: { provider: scripted, replies: [ {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  scanner: { model: scan, instructions: x }
  fixer: { model: fix, instructions: x, tools: [shell], approval: { default: allow } }
  summarizer: { model: sum, instructions: x }
jobs:
  scan: { worker: scanner }
  fix:
    worker: fixer
    needs: [scan]
    matrix: { repo: "\${{ jobs.scan.output.repos }}" }
    workspace: repos/\${{ matrix.repo }}
    input: "fix \${{ matrix.repo }}"
  summary:
    worker: summarizer
    needs: [fix]
    input: "all: \${{ jobs.fix.outputs }}"
YAML
}
reset() { for r in alpha beta gamma; do rm -rf "$T/top/repos/$r"; cp -a "$T/orig/$r" "$T/top/repos/$r"; done; }
manifest '{repos: [alpha, gamma]}'
out=$("$NS" validate "$T/top/m.yaml" 2>&1); rc=$?
expect_rc "a matrix from a needed job's output loads" 0 "$rc"
dir=$("$NS" run "$T/top/m.yaml" -j 2 --out "$T/top/runs" 2>"$T/err"); rc=$?
expect_rc "the run with the matrix made from scan's output" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
check "the progress line says what the matrix made" grep -qF "job fix: its matrix from scan: 2 jobs (fix-alpha, fix-gamma)" "$T/err"
check "run.json: scan, fix-alpha, fix-gamma, summary, all succeeded, no job 'fix'" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"]
sys.exit(sorted(j) != ["fix-alpha", "fix-gamma", "scan", "summary"] or any(v["status"] != "succeeded" for v in j.values())
         or j["fix-gamma"]["matrix"] != {"job": "fix", "values": {"repo": "gamma"}})' "$dir/run.json"
check "each member worked in its own workspace" bash -c "grep -qx fixed '$T/top/repos/alpha/name' && grep -qx fixed '$T/top/repos/gamma/name' && ! grep -q fixed '$T/top/repos/beta/name'"
check "a chain per workspace" test -f "$dir/snapshots/repos_alpha/end.tar.zst" -a -f "$dir/snapshots/repos_gamma/end.tar.zst" -a -f "$dir/snapshots/default/end.tar.zst"
check "summary got the map of the members' outputs" bash -c "zstd -dcq '$dir/jobs/summary/events.jsonl.zst' | grep -q 'all: {\\\\\"alpha\\\\\":{},\\\\\"gamma\\\\\":{}}'"
check "the run verifies" "$NS" audit "$dir" --verify
rm -rf "$T/r"; "$NS" restore "$dir" --step end --workspace repos_gamma --to "$T/r" 2>/dev/null
check "repos_gamma's end restored exactly" diff -r "$T/top/repos/gamma" "$T/r"
set -- $(zstd -dcq "$dir/jobs/fix-alpha/events.jsonl.zst" | python3 -c '
import json, sys
print(*[e["step"] for e in map(json.loads, sys.stdin) if e["type"] == "decision"])')
out=$("$NS" diff "$dir" --step "$1" 2>&1)
case "$out" in *"in workspace repos_alpha"*"+fixed"*) _pass=$((_pass + 1)) ;; *) _fail=$((_fail + 1)); echo "FAIL diff of fix-alpha's step: $out" ;; esac
check "the default workspace's chain leaves the members' workspaces out" bash -c "! tar --zstd -tf '$dir/snapshots/default/end.tar.zst' | grep -q '^repos/alpha/'"

# --resume: scan is carried over, the matrix is made again from its output and its members run
first=$dir
reset
dir=$("$NS" run "$T/top/m.yaml" --resume "$first" --out "$T/top/runs" 2>"$T/err"); rc=$?
expect_rc "--resume of a run with such a matrix" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
check "scan, the members it makes again and summary are carried over" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"]
sys.exit(sorted(j) != ["fix-alpha", "fix-gamma", "scan", "summary"] or any("carried_from" not in v for v in j.values()))' "$dir/run.json"
check "nothing started" bash -c "! grep -q ': started' '$T/err'"
check "the resumed run verifies" "$NS" audit "$dir" --verify

# --job with a member's id: scan runs, then only that member
reset
dir=$("$NS" run "$T/top/m.yaml" --job fix-gamma --out "$T/top/runs" 2>"$T/err"); rc=$?
expect_rc "--job fix-gamma" 0 "$rc"
check "only scan and fix-gamma ran" python3 -c '
import json, sys
sys.exit(sorted(json.load(open(sys.argv[1]))["jobs"]) != ["fix-gamma", "scan"])' "$dir/run.json"
check "fix-alpha did not touch its workspace" bash -c "! grep -q fixed '$T/top/repos/alpha/name'"
dir=$("$NS" run "$T/top/m.yaml" --job fix-beta --out "$T/top/runs" 2>"$T/err"); rc=$?
expect_rc "--job naming no member the matrix makes" 1 "$rc"
expect_grep "and says so" "not run: --job names no job of matrix fix, which made fix-alpha, fix-gamma" "$T/err"
out=$("$NS" run "$T/top/m.yaml" --job nofix-x --out "$T/top/runs" 2>&1); rc=$?
expect_rc "--job naming nothing at all" 2 "$rc"

# an output that is no list fails the matrix job, clearly; what needs it is skipped
reset
manifest '{repos: "alpha"}'
dir=$("$NS" run "$T/top/m.yaml" --out "$T/top/runs" 2>"$T/err"); rc=$?
expect_rc "an output that is not a list" 1 "$rc"
check "fix fails naming the key, the expression, what it gave and where" grep -qF "job fix: failed: its matrix: $T/top/m.yaml:20:21: matrix key 'repo': \${{ jobs.scan.output.repos }} gave alpha, which is not a JSON list" "$T/err"
check "run.json: fix failed, summary skipped" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"]
sys.exit(j["fix"]["status"] != "failed" or "not a JSON list" not in j["fix"]["error"] or j["summary"]["status"] != "skipped")' "$dir/run.json"
manifest '{repos: [alpha, {x: 1}]}'
dir=$("$NS" run "$T/top/m.yaml" --out "$T/top/runs" 2>"$T/err"); rc=$?
expect_rc "a list of something other than values" 1 "$rc"
expect_grep "says so" "the list holds something other than a string, number or boolean" "$T/err"
manifest '{repos: []}'
dir=$("$NS" run "$T/top/m.yaml" --out "$T/top/runs" 2>"$T/err"); rc=$?
expect_rc "an empty list" 1 "$rc"
expect_grep "says so" "matrix key 'repo' has no values" "$T/err"
manifest '{repos: [alpha, nowhere]}'
dir=$("$NS" run "$T/top/m.yaml" --out "$T/top/runs" 2>"$T/err"); rc=$?
expect_rc "a member whose workspace does not exist" 1 "$rc"
expect_grep "that member fails, saying why" "job fix-nowhere: failed: its matrix value: .*'nowhere' \(from a job's output\) names no folder beneath .*/repos" "$T/err"
check "the other member runs" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"]
sys.exit(j["fix-alpha"]["status"] != "succeeded" or j["fix-nowhere"]["status"] != "failed" or j["summary"]["status"] != "skipped")' "$dir/run.json"

# checked at load: the job must be in needs
sed 's/    needs: \[scan\]/    needs: []/' "$T/top/m.yaml" > "$T/top/bad.yaml"
out=$("$NS" validate "$T/top/bad.yaml" 2>&1); rc=$?
expect_rc "a matrix from a job not in needs" 2 "$rc"
case "$out" in *bad.yaml:20:*"not in this job's needs"*) _pass=$((_pass + 1)) ;; *) _fail=$((_fail + 1)); echo "FAIL not in needs: $out" ;; esac

# --resume carries the members that succeeded, by their key, like any job: a night where one
# member failed reruns that member (and what needs the matrix) only; a night whose scan runs again
# and lists other repositories carries the members it still makes with the same input, runs the
# new ones and leaves out the gone ones.
N=$T/n
mkdir -p "$N/runs"
for r in alpha beta gamma; do mkdir -p "$N/repos/$r"; echo "$r" > "$N/repos/$r/name"; done
cat > "$N/m.yaml" <<'YAML'
version: 1
workspace: .
models:
  prep: { provider: scripted, script: prep.yaml }
  scan: { provider: scripted, script: scan.yaml }
  fix-alpha: { provider: scripted, script: fix.yaml }
  fix-beta: { provider: scripted, script: fix.yaml }
  fix-gamma: { provider: scripted, script: gamma.yaml }
  sum: { provider: scripted, replies: [ {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  prepper: { model: prep, instructions: x, max_turns: 1 }
  scanner: { model: scan, instructions: x }
  fixer: { model: fix-alpha, instructions: x, tools: [shell], approval: { default: allow }, max_turns: 3 }
  summarizer: { model: sum, instructions: x }
jobs:
  prep: { worker: prepper, continue_on_error: true }
  scan: { worker: scanner, needs: [prep] }
  fix:
    worker: fixer
    model: fix-${{ matrix.repo }}
    fail_fast: false                     # fix-gamma's failure must not cancel fix-alpha (a race)
    needs: [scan]
    matrix: { repo: "${{ jobs.scan.output.repos }}" }
    workspace: repos/${{ matrix.repo }}
    input: "fix ${{ matrix.repo }}"
  summary: { worker: summarizer, needs: [fix], input: "all: ${{ jobs.fix.outputs }}" }
YAML
ok='[ {tool_calls: [ {name: final_result, arguments: {}} ]} ]'
fixok='[ {tool_calls: [ {name: shell, arguments: {command: "echo fixed >> name"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ]'
echo "$ok" > "$N/prep.yaml"
echo '[ {tool_calls: [ {name: final_result, arguments: {repos: [alpha, gamma]}} ]} ]' > "$N/scan.yaml"
echo "$fixok" > "$N/fix.yaml"
echo '[ {tool_calls: [ {name: shell, arguments: {command: "echo broke >> name"}} ]}, {text: "no"}, {text: "no"} ]' > "$N/gamma.yaml"
started() { grep -o 'job [a-z-]*: started' "$1" | awk '{print $2}' | tr -d : | sort | tr '\n' ' ' | sed 's/ $//'; }
jobsof() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"]
print(" ".join("%s=%s%s" % (k, v["status"], "@" + v["carried_from"][:8] if "carried_from" in v else "") for k, v in sorted(j.items())))' "$1"; }
rid() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["run_id"][:8])' "$1"; }
night=$("$NS" run "$N/m.yaml" -j 2 --out "$N/runs" 2>"$T/err"); rc=$?
expect_rc "the night where fix-gamma fails" 1 "$rc"
n1=$(rid "$night/run.json")
expect_eq "its jobs" "fix-alpha=succeeded fix-gamma=failed prep=succeeded scan=succeeded summary=skipped" "$(jobsof "$night/run.json")"
echo "$fixok" > "$N/gamma.yaml"
res=$("$NS" run "$N/m.yaml" --resume "$night" -j 2 --out "$N/runs" 2>"$T/err"); rc=$?
expect_rc "resumed with fix-gamma mended" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
expect_eq "only the failed member and summary ran" "fix-gamma summary" "$(started "$T/err")"
expect_grep "fix-alpha is said to be carried over" "job fix-alpha: carried over: it succeeded in .* with the same input" "$T/err"
expect_eq "run.json: prep, scan and fix-alpha carried from the night" \
	"fix-alpha=succeeded@$n1 fix-gamma=succeeded prep=succeeded@$n1 scan=succeeded@$n1 summary=succeeded" "$(jobsof "$res/run.json")"
check "fix-alpha's events are the night's, byte for byte" cmp "$night/jobs/fix-alpha/events.jsonl.zst" "$res/jobs/fix-alpha/events.jsonl.zst"
check "fix-alpha's output too" cmp "$night/jobs/fix-alpha/output.json" "$res/jobs/fix-alpha/output.json"
check "fix-alpha's run.json entry keeps its matrix and events head" python3 -c '
import json, sys
a, b = (json.load(open(p))["jobs"]["fix-alpha"] for p in sys.argv[1:])
b.pop("carried_from")
sys.exit(a != b)' "$night/run.json" "$res/run.json"
expect_eq "alpha was fixed once, in the night" "alpha fixed" "$(tr '\n' ' ' < "$N/repos/alpha/name" | sed 's/ $//')"
check "summary got both members' outputs" bash -c "zstd -dcq '$res/jobs/summary/events.jsonl.zst' | grep -q 'all: {\\\\\"alpha\\\\\":{},\\\\\"gamma\\\\\":{}}'"
check "the resumed run verifies on its own" "$NS" audit "$res" --verify
alstep=$(zstd -dcq "$res/jobs/fix-alpha/events.jsonl.zst" | python3 -c 'import json,sys; print(min(e["step"] for e in map(json.loads, sys.stdin) if e["type"] == "snapshot"))')
rm -rf "$T/r"; "$NS" restore "$res" --step "$alstep" --workspace repos_alpha --to "$T/r" 2>/dev/null
check "before fix-alpha's carried step: alpha as the night began" bash -c "[ \"\$(cat '$T/r/name')\" = alpha ]"
rm -rf "$T/r"; "$NS" restore "$res" --step end --workspace repos_alpha --to "$T/r" 2>/dev/null
check "repos_alpha's end: alpha now" diff -r "$N/repos/alpha" "$T/r"
rm -rf "$T/r"; "$NS" restore "$res" --step end --workspace repos_gamma --to "$T/r" 2>/dev/null
check "repos_gamma's end: gamma now" diff -r "$N/repos/gamma" "$T/r"
again=$("$NS" run "$N/m.yaml" --resume "$res" --out "$N/runs" 2>"$T/err"); rc=$?
expect_rc "resuming the mended run" 0 "$rc"
expect_eq "runs nothing" "" "$(started "$T/err")"
expect_eq "every job carried, each from the run it ran in" \
	"fix-alpha=succeeded@$n1 fix-gamma=succeeded@$(rid "$res/run.json") prep=succeeded@$n1 scan=succeeded@$n1 summary=succeeded@$(rid "$res/run.json")" \
	"$(jobsof "$again/run.json")"
check "it verifies" "$NS" audit "$again" --verify

# --from takes the members another run made (by id and values), as a shard's runs are taken
shard=$("$NS" run "$N/m.yaml" --job fix-alpha --out "$N/runs" 2>"$T/err"); rc=$?
expect_rc "a run of fix-alpha alone" 0 "$rc"
from=$("$NS" run "$N/m.yaml" --from "$shard" --out "$N/runs" 2>"$T/err"); rc=$?
expect_rc "--from that run" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
expect_eq "only the member it did not make and summary ran" "fix-gamma summary" "$(started "$T/err")"
expect_grep "fix-alpha is said to be taken" "job fix-alpha: taken from run .*: succeeded there" "$T/err"
check "run.json: fix-alpha in upstream, not in jobs" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(sorted(r["jobs"]) != ["fix-gamma", "summary"] or r["upstream"]["fix-alpha"]["status"] != "succeeded")' "$from/run.json"
check "summary got both members' outputs" bash -c "zstd -dcq '$from/jobs/summary/events.jsonl.zst' | grep -q 'all: {\\\\\"alpha\\\\\":{},\\\\\"gamma\\\\\":{}}'"
check "it verifies" "$NS" audit "$from" --verify
echo '[ {text: "no"} ]' > "$N/gamma.yaml"
shard=$("$NS" run "$N/m.yaml" --job fix-gamma --out "$N/runs" 2>"$T/err"); rc=$?
expect_rc "a run where fix-gamma fails" 1 "$rc"
echo "$fixok" > "$N/gamma.yaml"
from=$("$NS" run "$N/m.yaml" --job summary --from "$shard" --out "$N/runs" 2>"$T/err"); rc=$?
expect_rc "--from it: the failed member taken, not rerun, fails the run" 1 "$rc"
expect_grep "saying so" "job fix-gamma: failed in run .*taken with --from, not run here" "$T/err"
expect_eq "fix-alpha ran, summary was skipped" "fix-alpha" "$(started "$T/err")"

# scan runs again (the prep it needs failed) and lists alpha and beta: fix-alpha is carried (same
# key, same input), fix-beta runs, fix-gamma is gone.
echo '[ {text: "no"} ]' > "$N/prep.yaml"
night=$("$NS" run "$N/m.yaml" -j 2 --out "$N/runs" 2>"$T/err"); rc=$?
expect_rc "a night where prep fails (continue_on_error) and the rest succeeds" 0 "$rc"
n2=$(rid "$night/run.json")
echo "$ok" > "$N/prep.yaml"
echo '[ {tool_calls: [ {name: final_result, arguments: {repos: [alpha, beta]}} ]} ]' > "$N/scan.yaml"
res=$("$NS" run "$N/m.yaml" --resume "$night" -j 2 --out "$N/runs" 2>"$T/err"); rc=$?
expect_rc "resumed with scan listing alpha and beta" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
expect_eq "prep, scan, the new member and summary ran" "fix-beta prep scan summary" "$(started "$T/err")"
expect_eq "run.json: fix-alpha carried, fix-beta new, no fix-gamma" \
	"fix-alpha=succeeded@$n2 fix-beta=succeeded prep=succeeded scan=succeeded summary=succeeded" "$(jobsof "$res/run.json")"
check "no folder of fix-gamma, nor the layers of its workspace" test ! -e "$res/jobs/fix-gamma" -a ! -e "$res/snapshots/repos_gamma"
check "summary got alpha's and beta's outputs" bash -c "zstd -dcq '$res/jobs/summary/events.jsonl.zst' | grep -q 'all: {\\\\\"alpha\\\\\":{},\\\\\"beta\\\\\":{}}'"
check "it verifies" "$NS" audit "$res" --verify
# a member whose input changed runs again though it succeeded
sed -i 's/input: "fix ${{ matrix.repo }}"/input: "fix ${{ matrix.repo }} (${{ jobs.scan.output.why }})"/' "$N/m.yaml"
echo '[ {tool_calls: [ {name: final_result, arguments: {repos: [alpha, beta], why: first}} ]} ]' > "$N/scan.yaml"
echo '[ {text: "no"} ]' > "$N/prep.yaml"
night=$("$NS" run "$N/m.yaml" --out "$N/runs" 2>"$T/err"); rc=$?
expect_rc "a night on the changed manifest" 0 "$rc"
echo "$ok" > "$N/prep.yaml"
echo '[ {tool_calls: [ {name: final_result, arguments: {repos: [alpha, beta], why: later}} ]} ]' > "$N/scan.yaml"
res=$("$NS" run "$N/m.yaml" --resume "$night" --out "$N/runs" 2>"$T/err"); rc=$?
expect_rc "resumed with scan giving another reason" 0 "$rc"
expect_eq "both members ran again: their input changed" "fix-alpha fix-beta prep scan summary" "$(started "$T/err")"
check "it verifies" "$NS" audit "$res" --verify
done_tests
