#!/usr/bin/env bash
# run --resume with an edited manifest: the jobs that rerun may change (a failed job's max_turns
# raised), a change to what decided a carried job is refused (exit 2, naming the job and the key)
# before anything runs, each change is said on stderr and recorded in run.json's origin.edits, and
# the resumed run verifies; a carried job's record claiming a manifest no run ran still fails.
source "$(dirname "$0")/lib.sh"
mkdir -p "$T/ws" "$T/runs"
cat > "$T/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  scan:
    provider: scripted
    replies:
      - tool_calls: [ {name: shell, arguments: {command: "echo scanned >> state"}} ]
      - tool_calls: [ {name: final_result, arguments: {found: 3}} ]
  plan:
    provider: scripted
    replies:
      - tool_calls: [ {name: shell, arguments: {command: "echo 1 >> plan"}} ]
      - tool_calls: [ {name: shell, arguments: {command: "echo 2 >> plan"}} ]
      - tool_calls: [ {name: shell, arguments: {command: "echo 3 >> plan"}} ]
      - tool_calls: [ {name: final_result, arguments: {steps: 3}} ]
workers:
  scanner: { model: scan, instructions: scan it, tools: [shell], approval: { default: allow } }
  planner: { model: plan, instructions: plan it, tools: [shell], approval: { default: allow }, max_turns: 2 }
jobs:
  scan: { worker: scanner }
  plan: { worker: planner }
YAML
js() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); v=r
for k in sys.argv[2:]: v=v.get(k, {}) if isinstance(v, dict) else (v[int(k)] if isinstance(v, list) and int(k) < len(v) else {})
print(json.dumps(v) if isinstance(v, (list, dict)) and v != {} else (v if v != {} else ""))' "$@"; }
night=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the night fails: plan runs out of turns" 1 "$rc"
expect_eq "plan failed" failed "$(js "$night/run.json" jobs plan status)"
expect_eq "scan succeeded" succeeded "$(js "$night/run.json" jobs scan status)"

# No edit: as before, nothing said about the manifest.
cp -a "$night" "$T/night-copy"
same=$("$NS" run "$T/m.yaml" --resume "$night" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "resumed unedited: plan fails again the same way" 1 "$rc"
expect_nogrep "no change said" "manifest key" "$T/err"
expect_eq "no edits recorded" "" "$(js "$same/run.json" origin edits)"
expect_eq "no other manifest recorded" "" "$(js "$same/run.json" origin manifests)"
check "it verifies" "$NS" audit "$same" --verify

# An edit of a carried job's worker: refused before anything runs.
sed 's/instructions: scan it/instructions: scan it well/' "$T/m.yaml" > "$T/m2.yaml"
ls "$T/runs" > "$T/before"
out=$("$NS" run "$T/m2.yaml" --resume "$night" --out "$T/runs" 2>&1); rc=$?
expect_rc "a carried job's instructions changed: exit 2" 2 "$rc"
echo "$out" > "$T/out"
expect_grep "names the job and the key" "job scan is carried over.*key workers\.scanner\.instructions" "$T/out"
check "no run directory made" bash -c "ls '$T/runs' | cmp -s - '$T/before'"
# The same for the carried job's own entry, its model, and a key every job reads.
sed 's/  scan: { worker: scanner }/  scan: { worker: scanner, timeout: 5m }/' "$T/m.yaml" > "$T/m3.yaml"
out=$("$NS" run "$T/m3.yaml" --resume "$night" --out "$T/runs" 2>&1); rc=$?
expect_rc "the carried job's entry changed: exit 2" 2 "$rc"
echo "$out" > "$T/out"; expect_grep "names jobs.scan.timeout" "job scan .*key jobs\.scan\.timeout" "$T/out"
sed 's/      - tool_calls: \[ {name: final_result, arguments: {found: 3}} \]/      - tool_calls: [ {name: final_result, arguments: {found: 4}} ]/' "$T/m.yaml" > "$T/m4.yaml"
out=$("$NS" run "$T/m4.yaml" --resume "$night" --out "$T/runs" 2>&1); rc=$?
expect_rc "the carried job's model changed: exit 2" 2 "$rc"
echo "$out" > "$T/out"; expect_grep "names models.scan.replies" "job scan .*key models\.scan\.replies" "$T/out"
sed 's/^version: 1$/version: 1\nname: renamed/' "$T/m.yaml" > "$T/m5.yaml"
out=$("$NS" run "$T/m5.yaml" --resume "$night" --out "$T/runs" 2>&1); rc=$?
expect_rc "a key outside jobs, workers and models changed: exit 2" 2 "$rc"
echo "$out" > "$T/out"; expect_grep "names it" "job scan .*key name" "$T/out"
check "still no run directory made" bash -c "ls '$T/runs' | cmp -s - '$T/before'"

# Raise the failed job's max_turns: it reruns with the new limit and succeeds.
sed 's/max_turns: 2/max_turns: 6/' "$T/m.yaml" > "$T/m6.yaml"
res=$("$NS" run "$T/m6.yaml" --resume "$night" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "max_turns raised: the resumed night succeeds" 0 "$rc"
expect_grep "the change is said, for the job it decides" "plan.*manifest key workers\.planner\.max_turns changed.*runs again" "$T/err"
expect_eq "one change said" 1 "$(grep -c 'manifest key' "$T/err")"
expect_eq "only plan ran" plan "$(grep -o 'job [a-z]*: started' "$T/err" | awk '{print $2}' | tr -d : | tr '\n' ' ' | sed 's/ $//')"
expect_eq "plan succeeded" succeeded "$(js "$res/run.json" jobs plan status)"
expect_eq "with 4 turns (more than 2)" 4 "$(zstd -dcq "$res/jobs/plan/events.jsonl.zst" | grep -c '"type":"model_response"')"
expect_eq "scan carried" "$(js "$night/run.json" run_id)" "$(js "$res/run.json" jobs scan carried_from)"
check "scan's events untouched" cmp "$night/jobs/scan/events.jsonl.zst" "$res/jobs/scan/events.jsonl.zst"
expect_eq "run.json records the edit" workers.planner.max_turns "$(js "$res/run.json" origin edits 0 key)"
expect_eq "and the job it decided" '["plan"]' "$(js "$res/run.json" origin edits 0 jobs)"
nsha=$(sha256sum "$T/night-copy/manifest/m.yaml" | cut -d' ' -f1)
expect_eq "and the manifest scan ran under" "$nsha" "$(js "$res/run.json" origin manifests 0 sha256)"
expect_eq "run.json's manifest is the new one" "$(sha256sum "$T/m6.yaml" | cut -d' ' -f1)" "$(js "$res/run.json" manifest sha256)"
check "a copy of it in manifest/" cmp "$night/manifest/m.yaml" "$res/manifest/origin-$nsha.yaml"
"$NS" audit "$res" --verify > "$T/v" 2>&1; rc=$?
expect_rc "audit --verify of the edited resume: exit 0" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/v"
check "and as an archive" bash -c "tar --zstd -cf '$T/res.tar.zst' -C '$(dirname "$res")' '$(basename "$res")' && '$NS' audit '$T/res.tar.zst' --verify >/dev/null 2>&1"

# Resumed again (nothing failed): scan, carried twice, still ran the first manifest; verifies.
again=$("$NS" run "$T/m6.yaml" --resume "$res" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "resuming the edited resume: exit 0" 0 "$rc"
expect_nogrep "no change said" "manifest key" "$T/err"
expect_eq "the first manifest kept" "$nsha" "$(js "$again/run.json" origin manifests 0 sha256)"
check "it verifies" "$NS" audit "$again" --verify

# Forged records: a rerun job claiming the old manifest, a carried job claiming another, a copy
# that is not the manifest named: each fails verification (run.json and SHA256SUMS rewritten).
forge() { # forge DIR PYTHON: edit DIR/run.json with PYTHON (r is run.json), then SHA256SUMS
	python3 - "$1" "$2" <<'PY'
import json, sys, hashlib, os
d, code = sys.argv[1], sys.argv[2]
r = json.load(open(d + "/run.json"))
exec(code)
json.dump(r, open(d + "/run.json", "w"))
lines = []
for l in open(d + "/SHA256SUMS"):
    h, f = l.rstrip("\n").split("  ", 1)
    if os.path.exists(os.path.join(d, f)):
        h = hashlib.sha256(open(os.path.join(d, f), "rb").read()).hexdigest()
    lines.append(h + "  " + f)
open(d + "/SHA256SUMS", "w").write("\n".join(lines) + "\n")
PY
}
cp -a "$res" "$T/f1"
forge "$T/f1" 'del r["jobs"]["scan"]["carried_from"]'
"$NS" audit "$T/f1" --verify > "$T/v" 2>&1; rc=$?
expect_rc "a job of the old manifest not said to be carried: exit 4" 4 "$rc"
expect_grep "naming the manifest mismatch" "manifest.sha256 is .*jobs/scan/events.jsonl.zst:1 \(job_start\) ran" "$T/v"
cp -a "$res" "$T/f2"
forge "$T/f2" 'r["origin"]["manifests"][0]["sha256"] = "0" * 64'
"$NS" audit "$T/f2" --verify > "$T/v" 2>&1; rc=$?
expect_rc "origin.manifests naming another manifest: exit 4" 4 "$rc"
expect_grep "the carried job's manifest is refused" "jobs/scan/events.jsonl.zst:1 \(job_start\) ran" "$T/v"
cp -a "$res" "$T/f3"
echo "# forged" >> "$T/f3/manifest/origin-$nsha.yaml"
forge "$T/f3" 'pass'
"$NS" audit "$T/f3" --verify > "$T/v" 2>&1; rc=$?
expect_rc "the copy of the old manifest edited: exit 4" 4 "$rc"
expect_grep "naming it" "origin.manifests names .*origin-" "$T/v"
cp -a "$res" "$T/f4"
forge "$T/f4" 'r["origin"]["manifests"] = []; r["jobs"]["plan"]["carried_from"] = "x"'
"$NS" audit "$T/f4" --verify > "$T/v" 2>&1; rc=$?
expect_rc "no origin manifests: the carried job fails: exit 4" 4 "$rc"

# The failed job and a carried one share a worker: raising its max_turns touches both, refused.
sed -e 's/  scan: { worker: scanner }/  scan: { worker: planner, model: scan }/' "$T/m.yaml" > "$T/s.yaml"
n2=$("$NS" run "$T/s.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "a night of two jobs on one worker, plan failing" 1 "$rc"
sed 's/max_turns: 2/max_turns: 6/' "$T/s.yaml" > "$T/s2.yaml"
out=$("$NS" run "$T/s2.yaml" --resume "$n2" --out "$T/runs" 2>&1); rc=$?
expect_rc "the shared worker's max_turns raised: exit 2" 2 "$rc"
echo "$out" > "$T/out"; expect_grep "naming the carried job" "job scan is carried over.*key workers\.planner\.max_turns" "$T/out"
# A matrix made from a job's output. Its members succeeded and what it needs is carried: the
# matrix is carried too, an edit of it refused. What it needs runs again: an edit of it makes
# every member run again, none carried from the night with its old definition.
M=$T/mx
mkdir -p "$M/runs" "$M/repos/alpha" "$M/repos/gamma"
cat > "$M/m.yaml" <<'YAML'
version: 1
workspace: .
models:
  prep: { provider: scripted, script: prep.yaml }
  scan: { provider: scripted, replies: [ {tool_calls: [ {name: final_result, arguments: {repos: [alpha, gamma]}} ]} ] }
  fix: { provider: scripted, replies: [ {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  prepper: { model: prep, instructions: x, max_turns: 1 }
  scanner: { model: scan, instructions: x }
  fixer: { model: fix, instructions: fix it }
jobs:
  prep: { worker: prepper, continue_on_error: true }
  scan: { worker: scanner, needs: [prep] }
  fix:
    worker: fixer
    needs: [scan]
    matrix: { repo: "${{ jobs.scan.output.repos }}" }
    workspace: repos/${{ matrix.repo }}
    input: "fix ${{ matrix.repo }}"
YAML
echo '[ {text: "no"}, {text: "no"} ]' > "$M/prep.yaml"
mn=$("$NS" run "$M/m.yaml" --out "$M/runs" 2>"$T/err"); rc=$?
expect_eq "the matrix night: prep failed, the members succeeded" "failed succeeded succeeded" \
	"$(js "$mn/run.json" jobs prep status) $(js "$mn/run.json" jobs fix-alpha status) $(js "$mn/run.json" jobs fix-gamma status)"
echo '[ {tool_calls: [ {name: final_result, arguments: {}} ]} ]' > "$M/prep.yaml"
sed 's/instructions: fix it/instructions: fix it well/' "$M/m.yaml" > "$M/m2.yaml"
mr=$("$NS" run "$M/m2.yaml" --resume "$mn" --out "$M/runs" 2>"$T/err"); rc=$?
expect_rc "prep reruns, the matrix's worker edited: exit 0" 0 "$rc"
expect_eq "every member ran again" "fix-alpha fix-gamma prep scan" \
	"$(grep -o 'job [a-z-]*: started' "$T/err" | awk '{print $2}' | tr -d : | sort | tr '\n' ' ' | sed 's/ $//')"
expect_nogrep "none carried" "fix-.*carried over" "$T/err"
check "it verifies" "$NS" audit "$mr" --verify
# The same edit when the matrix is carried (a night where only a job after it failed).
cat >> "$M/m.yaml" <<'YAML'
  last: { worker: quitter, needs: [fix] }
YAML
sed -i 's/^workers:$/workers:\n  quitter: { model: prep, instructions: y, max_turns: 1 }/' "$M/m.yaml"
sed -i 's/  prepper: { model: prep,/  prepper: { model: fix,/' "$M/m.yaml"
echo '[ {text: "no"}, {text: "no"} ]' > "$M/prep.yaml"
mn2=$("$NS" run "$M/m.yaml" --out "$M/runs" 2>"$T/err"); rc=$?
expect_eq "a night where prep and the members succeeded and last failed" "succeeded succeeded succeeded failed" \
	"$(js "$mn2/run.json" jobs prep status) $(js "$mn2/run.json" jobs fix-alpha status) $(js "$mn2/run.json" jobs fix-gamma status) $(js "$mn2/run.json" jobs last status)"
sed 's/instructions: fix it/instructions: fix it well/' "$M/m.yaml" > "$M/m3.yaml"
ls "$M/runs" > "$T/before"
out=$("$NS" run "$M/m3.yaml" --resume "$mn2" --out "$M/runs" 2>&1); rc=$?
echo "$out" > "$T/out"
expect_rc "the carried matrix's worker edited: exit 2" 2 "$rc"
expect_grep "naming the matrix and the key" "job fix is carried over.*key workers\.fixer\.instructions" "$T/out"
check "no run directory made" bash -c "ls '$M/runs' | cmp -s - '$T/before'"
done_tests
