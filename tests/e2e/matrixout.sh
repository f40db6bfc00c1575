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
check "scan carried over, the members and summary run again" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"]
sys.exit(sorted(j) != ["fix-alpha", "fix-gamma", "scan", "summary"] or "carried_from" not in j["scan"]
         or any("carried_from" in j[k] for k in ("fix-alpha", "fix-gamma", "summary")))' "$dir/run.json"
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
expect_grep "says so" "repos/nowhere does not exist" "$T/err"

# checked at load: the job must be in needs
sed 's/    needs: \[scan\]/    needs: []/' "$T/top/m.yaml" > "$T/top/bad.yaml"
out=$("$NS" validate "$T/top/bad.yaml" 2>&1); rc=$?
expect_rc "a matrix from a job not in needs" 2 "$rc"
case "$out" in *bad.yaml:20:*"not in this job's needs"*) _pass=$((_pass + 1)) ;; *) _fail=$((_fail + 1)); echo "FAIL not in needs: $out" ;; esac
done_tests
