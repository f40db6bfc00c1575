#!/usr/bin/env bash
# A chain of layers per workspace (snapshots/<workspace>/) read back by diff, report, restore and
# audit --verify, also after merge: three matrix jobs at once, each on its own checkout, with a
# file tool's step (no layer of its own) between two shell steps.
source "$(dirname "$0")/lib.sh"
mkdir -p "$T/top" "$T/runs"
for r in alpha beta gamma; do
	mkdir -p "$T/top/repos/$r/src"
	echo "$r original" > "$T/top/repos/$r/README"
	echo "gone soon" > "$T/top/repos/$r/gone"
	printf '%s\n' "$r" > "$T/top/repos/$r/src/name"
done
cp -a "$T/top/repos" "$T/orig"
cat > "$T/top/m.yaml" <<'YAML'
version: 1
workspace: .
models:
  fix:
    provider: scripted
    replies:
      - tool_calls: [ {name: shell, arguments: {command: "echo one >> README; rm gone; mkdir -p d; cat src/name > d/who"}} ]
      - tool_calls: [ {name: write_file, arguments: {path: d/written, content: "by the file tool\n"}} ]
      - tool_calls: [ {name: shell, arguments: {command: "echo two >> README"}} ]
      - tool_calls: [ {name: final_result, arguments: {}} ]
workers:
  fixer: { model: fix, instructions: x, tools: [shell, write_file], approval: { default: allow } }
jobs:
  fix:
    worker: fixer
    matrix: { repo: [alpha, beta, gamma] }
    workspace: repos/${{ matrix.repo }}
    input: "fix ${{ matrix.repo }}"
YAML
dir=$("$NS" run "$T/top/m.yaml" -j 3 --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "three jobs on three workspaces" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
check "run.json names each job's workspace" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"]
sys.exit(any(j["fix-" + r].get("workspace") != "repos_" + r for r in ("alpha", "beta", "gamma")))' "$dir/run.json"
# steps JOB TOOL: the steps of a job's calls of a tool, in order
steps() { zstd -dcq "$dir/jobs/fix-$1/events.jsonl.zst" | python3 -c '
import json, sys
print(" ".join(str(e["step"]) for e in map(json.loads, sys.stdin) if e["type"] == "decision" and e.get("tool") == sys.argv[1]))' "$2"; }
others() { for o in alpha beta gamma; do [ "$o" != "$1" ] && echo "$o"; done; }
for r in alpha beta gamma; do
	set -- $(steps "$r" shell)
	s1=$1 s3=$2
	w=$(steps "$r" write_file)
	check "fix-$r: two shell steps and a write_file step ($s1 $w $s3)" test -n "$s1" -a -n "$w" -a -n "$s3"
	out=$("$NS" diff "$dir" --step "$s1" 2>&1); rc=$?
	expect_rc "diff of fix-$r's first step" 0 "$rc"
	case "$out" in
	*"in workspace repos_$r"*"(snapshots/repos_$r/"*) _pass=$((_pass + 1)) ;;
	*) _fail=$((_fail + 1)); echo "FAIL the header names workspace repos_$r and its layer: $out" ;;
	esac
	case "$out" in
	*"+++ b/d/who"*"+$r"*) _pass=$((_pass + 1)) ;;
	*) _fail=$((_fail + 1)); echo "FAIL step $s1 of fix-$r wrote d/who: $out" ;;
	esac
	case "$out" in
	*"-gone soon"*"+one"*|*"+one"*"-gone soon"*) _pass=$((_pass + 1)) ;;
	*) _fail=$((_fail + 1)); echo "FAIL step $s1: README and gone: $out" ;;
	esac
	bad=0
	for o in $(others "$r"); do case "$out" in *"+$o"*) bad=1 ;; esac; done
	expect_eq "fix-$r's diff holds nothing of the other workspaces" 0 "$bad"
	# the write_file step has no layer: its job's workspace is found, and its change is there
	out=$("$NS" diff "$dir" --step "$w" 2>&1); rc=$?
	expect_rc "diff of fix-$r's write_file step (no layer of its own)" 0 "$rc"
	case "$out" in
	*"in workspace repos_$r"*"+++ b/d/written"*"+by the file tool"*) _pass=$((_pass + 1)) ;;
	*) _fail=$((_fail + 1)); echo "FAIL step $w of fix-$r: the file tool's write: $out" ;;
	esac
	out=$("$NS" diff "$dir" --step "$s3" 2>&1); rc=$?
	expect_rc "diff of fix-$r's last step" 0 "$rc"
	case "$out" in
	*"until the end of the run (snapshots/repos_$r/end.tar.zst)"*"+two"*) _pass=$((_pass + 1)) ;;
	*) _fail=$((_fail + 1)); echo "FAIL step $s3 of fix-$r: until the end: $out" ;;
	esac
	# restore before each step of the chain, exactly
	rm -rf "$T/r"
	"$NS" restore "$dir" --step "$s3" --to "$T/r" 2>/dev/null
	rm -rf "$T/want"; cp -a "$T/orig/$r" "$T/want"
	(cd "$T/want" && echo one >> README && rm gone && mkdir -p d && cat src/name > d/who && printf 'by the file tool\n' > d/written)
	check "restore before step $s3 (fix-$r): after its first two steps, exactly" diff -r "$T/want" "$T/r"
done
out=$("$NS" diff "$dir" --step 1 --workspace nope 2>&1); rc=$?
expect_rc "diff --workspace naming no chain" 2 "$rc"
# the run's last step lies in every chain's span up to its end layer
last=$(for r in alpha beta gamma; do steps "$r" shell; done | tr ' ' '\n' | sort -n | tail -1)
set -- $(steps alpha shell)
[ "$2" = "$last" ] && other=repos_beta || other=repos_alpha
out=$("$NS" diff "$dir" --step "$last" --workspace "$other" 2>&1); rc=$?
expect_rc "diff --workspace of another chain: that chain's layer spanning the step" 0 "$rc"
case "$out" in *"until the end of the run (snapshots/$other/end.tar.zst)"*) _pass=$((_pass + 1)) ;; *) _fail=$((_fail + 1)); echo "FAIL --workspace picks the chain: $out" ;; esac

# report: every workspace's changes are on the page
"$NS" report "$dir" --out "$T/report.html" 2>"$T/rerr"; rc=$?
expect_rc "report of a run with three chains" 0 "$rc"
# each job's section shows its own workspace's changes, none of the others' (they ran at once)
check "each job's section holds its own workspace's changes" python3 -c '
import html, re, sys
page = html.unescape(re.sub(r"<[^>]+>", "", open(sys.argv[1]).read()))
secs = {m.group(1): m.group(2) for m in re.finditer(r"Job fix-(alpha|beta|gamma)(.*?)(?=Job fix-|$)", page, re.S)}
got = {k: sorted(r for r in ("alpha", "beta", "gamma") if re.search(r"^\+" + r + "$", v, re.M)) for k, v in secs.items()}
print(got)
sys.exit(got != {"alpha": ["alpha"], "beta": ["beta"], "gamma": ["gamma"]})' "$T/report.html"
expect_nogrep "no unreadable layers" "snapshot layers cannot be read" "$T/report.html"

# shards: plan spreads the members, each shard keeps its chains, merge keeps them whole
for r in alpha beta gamma; do rm -rf "$T/top/repos/$r"; cp -a "$T/orig/$r" "$T/top/repos/$r"; done
groups=$("$NS" plan "$T/top/m.yaml" --shards 2 --json); rc=$?
expect_rc "plan --shards 2" 0 "$rc"
check "the members are spread over two groups" python3 -c '
import json, sys
g = json.loads(sys.argv[1])["include"]
sys.exit(len(g) != 2 or sorted(j for x in g for j in x["jobs"]) != ["fix-alpha", "fix-beta", "fix-gamma"])' "$groups"
s1=$("$NS" run "$T/top/m.yaml" --shard 1/2 -j 2 --out "$T/runs" 2>/dev/null)
s2=$("$NS" run "$T/top/m.yaml" --shard 2/2 -j 2 --out "$T/runs" 2>/dev/null)
"$NS" merge "$s1" "$s2" --out "$T/merged" >/dev/null 2>"$T/merr"; rc=$?
expect_rc "merge of two shards" 0 "$rc"
mdir=$(ls -d "$T/merged"/*/ | head -1)
check "the merged run verifies" "$NS" audit "${mdir%/}" --verify
n=0
for sh in "${mdir%/}"/shards/*; do
	for jd in "$sh"/jobs/fix-*; do
		r=${jd##*/fix-}
		n=$((n + 1))
		j=$(zstd -dcq "$jd/events.jsonl.zst" | python3 -c '
import json, sys
print([e["step"] for e in map(json.loads, sys.stdin) if e["type"] == "decision" and e.get("tool") == "write_file"][0])')
		out=$("$NS" diff "$sh" --step "$j" 2>&1); rc=$?
		expect_rc "diff in a merged run's shard (fix-$r, step $j)" 0 "$rc"
		case "$out" in *"+++ b/d/written"*"+by the file tool"*) _pass=$((_pass + 1)) ;; *) _fail=$((_fail + 1)); echo "FAIL merged shard diff: $out" ;; esac
		ws=(); [ -d "$sh/snapshots/repos_$r" ] && ws=(--workspace "repos_$r")
		rm -rf "$T/r"
		"$NS" restore "$sh" --step end "${ws[@]}" --to "$T/r" 2>/dev/null
		check "the merged run's shard restores repos_$r's end exactly" diff -r "$T/top/repos/$r" "$T/r"
	done
done
expect_eq "the shards hold the three jobs" 3 "$n"
done_tests
