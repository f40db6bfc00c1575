#!/usr/bin/env bash
# recipes: every recipe of examples/ as a user meets it. `nightshift init --list` lists them;
# `init RECIPE --dir REPO` writes the recipe into a fresh git repository of a small Python project
# (tests/fixtures/recipes/project) and refuses to write again; the manifest it wrote validates;
# the night runs as shipped but for its model, replaced by --model with a stateless loopback
# server (tests/recipemodel.py) that plays the job's trajectory, each turn only when the last tool
# result holds what the trajectory expects (a test failing, then passing; a rule denying). Then:
# the typed output, the approval rules' denials, audit --verify, and the night's change: its
# changes.patch applies on a clean clone of the starting commit and gives the end tree, where the
# tests pass (and the linter is clean). Every example of examples/ validates.
source "$(dirname "$0")/lib.sh"
needuserns recipes
command -v git >/dev/null || { skip recipes "git is not installed (ci/packages.txt has it)"; done_tests; exit; }
command -v python3 >/dev/null || { skip recipes "python3 is not installed"; done_tests; exit; }
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
export OPENAI_API_KEY=sk-recipes-test ANTHROPIC_API_KEY=sk-ant-recipes-test
FIX=$ROOT/tests/fixtures/recipes
recipes=$("$NS" init --list | cut -d' ' -f1)
expect_eq "init --list lists the five recipes" "bump-deps fix-lint fix-tests sync-docs triage-issues" "$(echo $recipes)"
"$NS" init nosuch --dir "$T" >/dev/null 2>&1
expect_rc "init of no such recipe" 2 $?
"$NS" init >/dev/null 2>"$T/noarg"
expect_rc "init without a recipe" 2 $?
expect_grep "says which there are" "fix-tests" "$T/noarg"

# every example validates as shipped (hello on its own, the recipes where init puts them)
for m in "$ROOT"/examples/*/nightshift.yaml; do
	r=$(basename "$(dirname "$m")")
	if [ "$r" = hello ]; then
		"$NS" validate "$m" >"$T/v" 2>&1
	else
		mkdir -p "$T/val/$r/.nightshift" && cp -r "$ROOT/examples/$r" "$T/val/$r/.nightshift/"
		"$NS" validate "$T/val/$r/.nightshift/$r/nightshift.yaml" >"$T/v" 2>&1
	fi
	expect_rc "example $r validates" 0 $?
	[ -f "$ROOT/ci/examples/$r.yml" ] || [ "$r" = hello ] || expect_eq "example $r has a workflow" yes no
done

serve() { # TRAJECTORY: start the model server, set PORT
	rm -f "$T/port"
	python3 "$ROOT/tests/recipemodel.py" "$1" "$T/port" "$T/model.log" "nsrecipes$$" &
	SERVER=$!
	waitfor 60 test -s "$T/port" || { echo "the model server did not start"; }
	PORT=$(cat "$T/port")
}

for r in $recipes; do
	repo=$T/$r
	cp -r "$FIX/project" "$repo"
	# the project's one bug is fix-tests' to fix (and issue 41 of triage's); the others start green
	case $r in fix-tests|triage-issues) ;; *) sed -i 's/return a - b/return a + b/' "$repo/calc/ops.py" ;; esac
	# a real repository's files are older than the night: a .pyc records its source's mtime in
	# whole seconds, so a same-size fix made within the second the file was copied reads stale
	find "$repo" -exec touch -h -d '1 hour ago' {} +
	git -C "$repo" init -q && git -C "$repo" add -A && git -C "$repo" commit -qm start
	"$NS" init "$r" --dir "$repo" >"$T/init.out" 2>&1
	expect_rc "$r: init writes it" 0 $?
	expect_grep "$r: its workflow" "^$repo/.github/workflows/nightshift-$r.yml$" "$T/init.out"
	cmp -s "$repo/.nightshift/$r/nightshift.yaml" "$ROOT/examples/$r/nightshift.yaml"
	expect_rc "$r: the manifest written is the example's" 0 $?
	"$NS" init "$r" --dir "$repo" >/dev/null 2>"$T/again"
	expect_rc "$r: init never overwrites" 2 $?
	expect_grep "$r: and names the file" "$repo/.nightshift/$r/.*already there" "$T/again"
	"$NS" validate "$repo/.nightshift/$r/nightshift.yaml" >"$T/v" 2>&1
	expect_rc "$r: what init wrote validates" 0 $?; [ $? = 0 ] || cat "$T/v"
	case $r in
	bump-deps) cp "$FIX/available.txt" "$repo/.nightshift/bump-deps/" ;;
	triage-issues) cp "$FIX/issues.json" "$repo/.nightshift/triage-issues/" ;;
	esac
	git -C "$repo" add -A && git -C "$repo" commit -qm "nightshift init $r"
	model=$(sed -n 's/^    provider: //p' "$repo/.nightshift/$r/nightshift.yaml")
	name=$(sed -n 's/^    model: //p' "$repo/.nightshift/$r/nightshift.yaml")
	serve "$FIX/$r.json"
	if [ "$model" = openai ]; then spec="openai:$name@http://127.0.0.1:$PORT/v1,key=OPENAI_API_KEY"
	else spec="anthropic:$name@http://127.0.0.1:$PORT,key=ANTHROPIC_API_KEY"; fi
	dir=$("$NS" run "$repo/.nightshift/$r/nightshift.yaml" --model "default=$spec" 2>"$T/err"); rc=$?
	kill "$SERVER"; wait "$SERVER" 2>/dev/null
	expect_rc "$r: the night succeeds" 0 "$rc"; [ "$rc" = 0 ] || { cat "$T/err"; tail -3 "$T/model.log"; }
	expect_nogrep "$r: every turn was played as the trajectory expects" '"problem": "' "$T/model.log"
	: >"$T/model.log"
	job=$(sed -n '/^jobs:/,$s/^  \([a-z-]*\):$/\1/p' "$repo/.nightshift/$r/nightshift.yaml")
	out=$dir/jobs/$job/output.json
	"$NS" audit "$dir" --verify >/dev/null 2>&1
	expect_rc "$r: the run verifies" 0 $?
	"$NS" audit "$dir" --decision deny --json >"$T/denied" 2>/dev/null
	expect_eq "$r: the rules denied the one step the trajectory tried against them" 1 "$(grep -c . "$T/denied")"
	case $r in
	fix-tests) expect_eq "$r: output" "true true" "$(jq -r '"\(.fixed) \(.tests_passing)"' "$out")" ;;
	bump-deps) expect_eq "$r: output" "requests urllib3 | flask" "$(jq -r '"\([.bumped[].name]|join(" ")) | \([.skipped[].name]|join(" "))"' "$out")" ;;
	fix-lint) expect_eq "$r: output" "2 0" "$(jq -r '"\(.fixed) \(.remaining)"' "$out")" ;;
	sync-docs) expect_eq "$r: output" "docs/usage.md" "$(jq -r '.updated|join(" ")' "$out")" ;;
	triage-issues) expect_eq "$r: output" "41:bug:p0 42:enhancement,good-first-issue:p3 43:documentation:p3" \
		"$(jq -r '[.issues[]|"\(.number):\(.labels|join(",")):\(.priority)"]|join(" ")' "$out")" ;;
	esac
	if [ "$r" = triage-issues ]; then
		check "$r: a read-only night leaves no patch" test ! -e "$dir/jobs/$job/changes.patch"
		expect_eq "$r: nor a change" "" "$(git -C "$repo" status --porcelain -- . ':!.nightshift/*/runs')"
		continue
	fi
	patch=$dir/jobs/$job/changes.patch
	check "$r: the night left its change as changes.patch" test -s "$patch"
	expect_grep "$r: in SHA256SUMS" "  jobs/$job/changes.patch$" "$dir/SHA256SUMS"
	git clone -q "$repo" "$T/$r.co"
	git -C "$T/$r.co" apply --check "$patch" 2>"$T/aerr"
	expect_rc "$r: git apply --check on a clean clone of the starting commit" 0 $?; cat "$T/aerr"
	git -C "$T/$r.co" apply "$patch"
	expect_eq "$r: applied, the clone is the night's end tree" "" \
		"$(diff -r -x .git -x runs -x __pycache__ "$T/$r.co" "$repo" 2>&1 | head -5)"
	expect_nogrep "$r: no ignored file in the patch" "__pycache__|\.pyc" "$patch"
	(cd "$T/$r.co" && python3 -m unittest discover -s tests -t . >/dev/null 2>&1)
	expect_rc "$r: the tests pass on the patched clone" 0 $?
	[ "$r" = fix-lint ] && { (cd "$T/$r.co" && python3 tools/lint.py >/dev/null); expect_rc "$r: the linter is clean there" 0 $?; }
	case $r in
	fix-tests) expect_grep "$r: the fix" "^\+    return a \+ b" "$patch"; expect_nogrep "$r: not the tests" "test_ops" "$patch" ;;
	bump-deps) expect_grep "$r: the bump" "^\+requests==2.32.3" "$patch"; expect_nogrep "$r: nothing off the allowlist" "^[-+]flask" "$patch" ;;
	sync-docs) expect_grep "$r: the docs" "^\+## mul\(a, b\)" "$patch"; expect_nogrep "$r: no code" "calc/ops.py" "$patch" ;;
	esac
done

# prune among the runs of one recipe: keeps the newest
runs=$T/fix-tests/.nightshift/fix-tests/runs
expect_eq "a runs folder with one run" 1 "$(ls "$runs" | wc -l)"
"$NS" prune "$runs" --keep 1 >"$T/pr" 2>&1
expect_eq "prune keeps the only (newest) run" 1 "$(ls "$runs" | wc -l)"
done_tests
