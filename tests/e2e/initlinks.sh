#!/usr/bin/env bash
# initlinks: `nightshift init` writes into a checkout, whose .github, .nightshift or any folder
# under them may be committed as a symlink out of the repository. init creates each folder and
# file beneath DIR without following a link (mkdirat/openat O_NOFOLLOW, cmd/init.c): a link on
# the way is refused (exit 2, naming it) and nothing is written outside.
source "$(dirname "$0")/lib.sh"
recipe=$("$NS" init --list | head -1 | cut -d' ' -f1)
for name in .github .nightshift .github/workflows ".nightshift/$recipe"; do
	rm -rf "$T/repo" "$T/outside"
	mkdir -p "$T/repo/$(dirname "$name")" "$T/outside"
	ln -s ../outside "$T/repo/$name"
	case $name in */*) ln -sfn "$T/outside" "$T/repo/$name" ;; esac
	"$NS" init "$recipe" --dir "$T/repo" >"$T/out" 2>"$T/err"
	expect_rc "init with $name a link" 2 $?
	check "init names the link $name" grep -qF "$name -> " "$T/err"
	check "nothing written outside through $name" bash -c "[ -z \"\$(ls -A '$T/outside')\" ]"
	check "nothing written inside either ($name)" bash -c "! find '$T/repo' -type f | grep -q ."
done
rm -rf "$T/repo" "$T/outside"; mkdir -p "$T/repo"
"$NS" init "$recipe" --dir "$T/repo" >"$T/out" 2>"$T/err"
expect_rc "init into a plain checkout" 0 $?
check "the workflow is written" test -f "$T/repo/.github/workflows/nightshift-$recipe.yml"
check "the manifest is written" test -f "$T/repo/.nightshift/$recipe/nightshift.yaml"
"$NS" init "$recipe" --dir "$T/repo" >"$T/out" 2>"$T/err"
expect_rc "init again: the files are there" 2 $?
done_tests
