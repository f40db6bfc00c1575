#!/usr/bin/env bash
# resumeinputs: a run's inputs are a record's. `run --resume RUN` without --set takes them only
# from a RUN whose signature --allowed-signers checks; an unchecked RUN with inputs is refused
# (exit 2, naming them) before anything runs, and --set gives the user's own values. The docs'
# nightly example: a matrix from an input, each member's workspace repos/${{ matrix.repo }}.
source "$(dirname "$0")/lib.sh"
mkdir -p "$T/proj/repos/api" "$T/victim"
echo keep > "$T/victim/keep.txt"
cat > "$T/proj/m.yaml" <<'YAML'
version: 1
workspace: repos
models:
  d: { provider: scripted, replies: [ {tool_calls: [ {name: shell, arguments: {command: "echo PWNED > PWNED.txt; exit 1"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
  bad: { provider: scripted, replies: [ {text: "no call"} ] }
workers:
  w: { model: d, instructions: x, tools: [shell], approval: { default: allow } }
  f: { model: bad, instructions: x, max_turns: 1 }
jobs:
  scan: { worker: w, matrix: { repo: "${{ inputs.repos }}" }, workspace: "repos/${{ matrix.repo }}" }
  flaky: { worker: f }
YAML
# the attacker's night, genuine (it passes audit --verify) on the attacker's machine, where
# repos/../../victim is a folder of its own; a job failed, so that the user resumes it
mkdir -p "$T/att/proj/repos" "$T/att/victim"
cp "$T/proj/m.yaml" "$T/att/proj/m.yaml"
run=$("$NS" run "$T/att/proj/m.yaml" --out "$T/runs" --set 'repos=["../../victim"]' 2>"$T/err")
check "the night ran, a job failed" grep -q '"failed"' "$run/run.json"
"$NS" audit "$run" --verify >/dev/null 2>&1
expect_rc "the attacker's run verifies" 0 $?
"$NS" run "$T/proj/m.yaml" --out "$T/runs2" --resume "$run" >"$T/out" 2>"$T/err"; rc=$?
expect_rc "--resume of an unchecked run with inputs: exit 2" 2 $rc
expect_grep "it names the inputs" "its inputs \\(repos\\) are the record's" "$T/err"
expect_grep "and the way on" "give your values with --set KEY=VALUE" "$T/err"
expect_eq "the host folder is untouched" keep.txt "$(ls -A "$T/victim")"
expect_eq "no run directory made" "" "$(ls "$T/runs2" 2>/dev/null)"
"$NS" run "$T/proj/m.yaml" --out "$T/runs2" --resume "$run" --set 'repos=["api"]' >"$T/out" 2>"$T/err"; rc=$?
expect_grep "--set gives the user's values: they make the jobs (the record's member is not one)" "job 'scan-[_.]*victim' is not in" "$T/err"
expect_eq "the host folder is still untouched" keep.txt "$(ls -A "$T/victim")"
# a signed night resumed with --allowed-signers: its inputs are taken
if command -v ssh-keygen >/dev/null; then
	ssh-keygen -q -t ed25519 -N '' -C night -f "$T/key"
	echo "night@ci $(cut -d' ' -f1,2 "$T/key.pub")" > "$T/allowed"
	srun=$("$NS" run "$T/proj/m.yaml" --out "$T/runs3" --set 'repos=["api"]' --sign "$T/key" 2>"$T/err")
	"$NS" run "$T/proj/m.yaml" --out "$T/runs4" --resume "$srun" --allowed-signers "$T/allowed" >"$T/out" 2>"$T/err"
	new=$(cat "$T/out")
	check "a checked run's inputs are taken" grep -Eq '"repos":[[:space:]]*"\[\\"api\\"\]"' "$new/run.json"
else
	skip "signed resume" "ssh-keygen is not installed (openssh-client)"
fi
done_tests
