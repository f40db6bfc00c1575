#!/usr/bin/env bash
# A workspace per job: matrix jobs on their own workspaces run at once under -j, each workspace
# has its own chain of layers restored exactly, writers sharing one wait (and say for whom),
# audit --verify and replay take such a run, a run with one workspace keeps snapshots/NNNN.
source "$(dirname "$0")/lib.sh"
mkdir -p "$T/top" "$T/runs"
for r in alpha beta gamma; do
	mkdir -p "$T/top/repos/$r/src"
	echo "$r original" > "$T/top/repos/$r/README"
	echo "gone soon" > "$T/top/repos/$r/gone"
	printf '%s\n' "$r" > "$T/top/repos/$r/src/name"
done
cp -a "$T/top/repos" "$T/orig"
# Each job's first step waits (up to 30 s) in a folder all three mount until all three are there,
# and writes down how many it saw: jobs run one at a time would each see fewer. (A replay makes
# no mounts: there the step goes straight on.)
mkdir -p "$T/meet"
cat > "$T/top/m.yaml" <<'YAML'
version: 1
workspace: .
sandbox: { mounts: [ {source: MEET, target: /meet, mode: rw} ] }
models:
  fix:
    provider: scripted
    replies:
      - tool_calls: [ {name: shell, arguments: {command: "if [ -d /meet ]; then r=$(cat src/name); touch /meet/in-$r; n=0; while [ $(ls /meet | grep -c ^in-) -lt 3 ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n+1)); done; ls /meet | grep -c ^in- > /meet/saw-$r; fi; echo one >> README; rm gone; mkdir -p d; echo new > d/n"}} ]
      - tool_calls: [ {name: shell, arguments: {command: "echo two >> README; cat src/name > d/who"}} ]
      - tool_calls: [ {name: final_result, arguments: {}} ]
workers:
  fixer: { model: fix, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  fix:
    worker: fixer
    matrix: { repo: [alpha, beta, gamma] }
    workspace: repos/${{ matrix.repo }}
    input: "fix ${{ matrix.repo }}"
YAML
sed -i "s|MEET|$T/meet|" "$T/top/m.yaml"
dir=$("$NS" run "$T/top/m.yaml" -j 3 --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "three writers on three workspaces succeed" 0 "$rc"; [ "$rc" = 0 ] || cat "$T/err"
expect_eq "they ran at once under -j 3: each first step saw all three" "3 3 3" \
	"$(cat "$T/meet/saw-alpha" "$T/meet/saw-beta" "$T/meet/saw-gamma" 2>&1 | tr '\n' ' ' | sed 's/ $//')"
for r in alpha beta gamma; do
	check "the job on $r changed only its own workspace" grep -qx "$r" "$T/top/repos/$r/d/who"
	check "$r has its own chain" test -f "$dir/snapshots/repos_$r/end.tar.zst"
done
check "no layer at the top of snapshots/" bash -c "! ls '$dir/snapshots/' | grep -q tar.zst"
check "run.json names the workspaces" python3 -c '
import json, sys
w = json.load(open(sys.argv[1]))["workspaces"]
sys.exit(sorted(w) != ["repos_alpha", "repos_beta", "repos_gamma"] or not w["repos_beta"].endswith("/repos/beta"))' "$dir/run.json"
check "the run verifies" "$NS" audit "$dir" --verify
# Each layer restores exactly: before a job's first step its workspace as it was at the start,
# before its second the state after the first, end the state now.
steps() { zstd -dcq "$dir/jobs/fix-$1/events.jsonl.zst" | python3 -c '
import json, sys
print(" ".join(str(e["step"]) for e in map(json.loads, sys.stdin) if e["type"] == "snapshot"))'; }
for r in alpha beta gamma; do
	st=$(steps "$r")
	set -- $st none none # a job that failed early still lets the checks below say what is missing
	expect_eq "fix-$r took two layers in its own chain" "2 snapshots/repos_$r/$(printf %04d "$1").tar.zst" \
		"$(wc -w <<<"$st") $(zstd -dcq "$dir/jobs/fix-$r/events.jsonl.zst" | grep -o "snapshots/repos_$r/[0-9]*.tar.zst" | head -1)"
	rm -rf "$T/r1" "$T/r2" "$T/re"
	"$NS" restore "$dir" --step "$1" --to "$T/r1" 2>/dev/null
	check "before step $1 (fix-$r): the workspace as it was" diff -r "$T/orig/$r" "$T/r1"
	"$NS" restore "$dir" --step "$2" --to "$T/r2" 2>/dev/null
	mkdir -p "$T/after1"; rm -rf "$T/after1/$r"; cp -a "$T/orig/$r" "$T/after1/$r"
	(cd "$T/after1/$r" && echo one >> README && rm gone && mkdir -p d && echo new > d/n)
	check "before step $2 (fix-$r): the state after its first step" diff -r "$T/after1/$r" "$T/r2"
	"$NS" restore "$dir" --step end --workspace "repos_$r" --to "$T/re" 2>/dev/null
	check "end of repos_$r: the workspace now" diff -r "$T/top/repos/$r" "$T/re"
done
out=$("$NS" restore "$dir" --step end --to "$T/rx" 2>&1); rc=$?
expect_rc "end without --workspace when there are several" 2 "$rc"
case "$out" in *"name one with --workspace (repos_"*) _pass=$((_pass + 1)) ;; *) _fail=$((_fail + 1)); echo "FAIL end names the workspaces: $out" ;; esac
out=$("$NS" restore "$dir" --step 1 --workspace nope --to "$T/rx" 2>&1); rc=$?
expect_rc "an unknown workspace" 2 "$rc"

# replay restores every workspace and reruns offline to the same record.
rdir=$("$NS" replay "$dir" --out "$T/replays" 2>"$T/rerr"); rc=$?
expect_rc "replay of a run with several workspaces matches" 0 "$rc"
expect_grep "each workspace restored" "workspace repos_gamma restored from the first snapshot" "$T/rerr"

# One workspace (one member selected): today's layout, and replay still finds it.
dir=$("$NS" run "$T/top/m.yaml" --job fix-beta --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "one member alone" 0 "$rc"
check "one workspace: layers in snapshots/" test -f "$dir/snapshots/end.tar.zst"
check "named in run.json" python3 -c 'import json,sys; sys.exit(list(json.load(open(sys.argv[1]))["workspaces"]) != ["repos_beta"])' "$dir/run.json"
rdir=$("$NS" replay "$dir" --out "$T/replays" 2>"$T/rerr"); rc=$?
expect_rc "its replay matches" 0 "$rc"; [ "$rc" = 0 ] || cat "$T/rerr"

# Two writers sharing a workspace: the second waits, and the progress line says for whom.
cat > "$T/top/s.yaml" <<'YAML'
version: 1
workspace: .
models:
  fix: { provider: scripted, replies: [ {tool_calls: [ {name: shell, arguments: {command: "sleep 1"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  fixer: { model: fix, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  a: { worker: fixer, workspace: repos/alpha }
  b: { worker: fixer, workspace: repos/alpha }
  c: { worker: fixer, workspace: repos/beta }
YAML
dir=$("$NS" run "$T/top/s.yaml" -j 3 --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "shared and own workspaces" 0 "$rc"; [ "$rc" = 0 ] || cat "$T/err"
expect_grep "the waiting writer says why" "job b: waiting: job a may change its workspace repos_alpha" "$T/err"
check "c did not wait for a" python3 - "$T/err" <<'PY'
import sys
l = open(sys.argv[1]).read().splitlines()
at = lambda s: next(i for i, x in enumerate(l) if s in x)
sys.exit(not at("job c: started") < at("job a: succeeded") < at("job b: started"))
PY
check "two workspaces: two chains" test -f "$dir/snapshots/repos_beta/end.tar.zst"

# A workspace name shared by two folders, and a folder that does not exist: refused up front.
mkdir -p "$T/top/x/a" "$T/top/x_a"
printf 'version: 1\nmodels: { d: { provider: scripted, replies: [] } }\nworkers: { w: { model: d, instructions: x } }\njobs:\n  p: { worker: w, workspace: x/a }\n  q: { worker: w, workspace: x_a }\n' > "$T/top/n.yaml"
out=$("$NS" validate "$T/top/n.yaml" 2>&1); rc=$?
expect_rc "two folders, one name" 2 "$rc"
case "$out" in *"two folders with one name"*) _pass=$((_pass + 1)) ;; *) _fail=$((_fail + 1)); echo "FAIL names apart: $out" ;; esac
printf 'version: 1\nmodels: { d: { provider: scripted, replies: [] } }\nworkers: { w: { model: d, instructions: x } }\njobs:\n  p: { worker: w, workspace: "no/${{ inputs.r }}" }\n' > "$T/top/n.yaml"
out=$("$NS" validate "$T/top/n.yaml" --set r=where 2>&1); rc=$?
expect_rc "a workspace that does not exist" 2 "$rc"
case "$out" in *n.yaml:5:*"no/where does not exist"*) _pass=$((_pass + 1)) ;; *) _fail=$((_fail + 1)); echo "FAIL missing workspace: $out" ;; esac
done_tests
