#!/usr/bin/env bash
# gitignore: snapshot.gitignore: true leaves out of the layers exactly what git ignores. A tree is
# generated with nested .gitignore files, negations, folder-only patterns, anchored ones, "**",
# sets, escaped characters and .git/info/exclude; every path of it is asked of
# `git check-ignore --no-index`, and the first layer of a run must hold exactly the paths git
# does not ignore (agreement on every path, folders included). Then the report and the whole-run
# patch leave out a night's ignored output (__pycache__), and a .gitignore changed by a step
# changes the next layer.
source "$(dirname "$0")/lib.sh"
needuserns gitignore
command -v git >/dev/null || { skip gitignore "git is not installed (ci/packages.txt has it)"; done_tests; exit; }
ws=$T/ws
mkdir -p "$ws"
git -C "$ws" init -q
cd "$ws"
# the tree: names chosen to hit each rule, in several folders and depths
for d in . src src/sub src/sub/deep build docs docs/build logs a/b/c a/x/c "sp ace" keep keep/inner vendor/lib; do
	mkdir -p "$d"
	for f in x.o x.c debug.log important.log '#hash' '!bang' 'trail ' notes.txt foo Foo.md cache.tmp; do
		printf '%s\n' "$d/$f" >"$d/$f"
	done
done
mkdir -p node_modules/pkg out/gen __pycache__ src/__pycache__
echo 1 >node_modules/pkg/index.js; echo 2 >out/gen/file.c; echo 3 >__pycache__/m.pyc; echo 4 >src/__pycache__/n.pyc
cat >.gitignore <<'G'
# comment line
*.o
*.log
!important.log
/build/
node_modules/
\#hash
\!bang
trail\ 
**/deep/**
a/**/c
[Ff]oo.md
cache.tm?
/out
__pycache__/
vendor/*
!vendor/lib
G
cat >src/.gitignore <<'G'
!x.o
notes.txt
/foo
sub/debug.log
G
cat >docs/.gitignore <<'G'
!*.log
build
G
cat >keep/.gitignore <<'G'
*
!*/
!notes.txt
G
printf 'logs/\n' >.git/info/exclude
cd - >/dev/null

# git's verdict for every path (files and folders) of the tree
(cd "$ws" && find . -mindepth 1 -path ./.git -prune -o -print | sed 's|^\./||' | LC_ALL=C sort) >"$T/all"
(cd "$ws" && git check-ignore --no-index --stdin <"$T/all" | LC_ALL=C sort) >"$T/ignored"
# a path under an ignored folder is ignored too (git never looks inside)
: >"$T/gitignored"
while IFS= read -r p; do
	hit=0
	while IFS= read -r q; do case "$p" in "$q"|"$q"/*) hit=1; break;; esac; done <"$T/ignored"
	[ "$hit" = 1 ] && printf '%s\n' "$p" >>"$T/gitignored"
done <"$T/all"
comm -23 "$T/all" "$T/gitignored" >"$T/kept"
expect_eq "the generated tree has ignored and kept paths" 1 "$([ "$(wc -l <"$T/gitignored")" -gt 40 ] && [ "$(wc -l <"$T/kept")" -gt 40 ] && echo 1)"

cat >"$T/m.yaml" <<'YAML'
version: 1
workspace: ws
snapshot: { gitignore: true, exclude: [".git", ".git/**"] }
models:
  s: { provider: scripted, replies: [
    {tool_calls: [ {name: shell, arguments: {command: "mkdir -p src/__pycache__ && n=ne && echo x > src/__pycache__/${n}w.pyc && echo fixed > src/fix.txt && echo '*.txt' >> docs/.gitignore"}} ]},
    {tool_calls: [ {name: shell, arguments: {command: "true"}} ]},
    {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: s, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
"$NS" validate "$T/m.yaml" >/dev/null 2>&1
expect_rc "snapshot.gitignore validates" 0 $?
dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the run" 0 "$rc"; [ "$rc" = 0 ] || cat "$T/err"
# (the layer's "." entry is the workspace folder itself: its mode and times, no path of git's)
tar --zstd -tf "$dir/snapshots/0001.tar.zst" | sed 's|/$||; s|^\./||' | grep -v '^\.wh\.' | grep -v '^$' | grep -vx '\.' | LC_ALL=C sort -u >"$T/layer"
diff "$T/kept" "$T/layer" >"$T/disagree"
expect_eq "the first layer holds exactly what git does not ignore" "" "$(head -20 "$T/disagree")"
"$NS" diff "$dir" >"$T/run.patch" 2>/dev/null
expect_grep "the night's fix is in the patch" "^\+\+\+ b/src/fix.txt" "$T/run.patch"
expect_nogrep "its __pycache__ is not" "__pycache__" "$T/run.patch"
"$NS" report "$dir" --out "$T/report.html" >/dev/null 2>&1
expect_grep "the report shows the night's changes" "Workspace changes in step 1" "$T/report.html"
expect_nogrep "but not what git ignores" "new.pyc" "$T/report.html"
tar --zstd -tf "$dir/snapshots/0002.tar.zst" | grep -v '^\./$' >"$T/l2"
# A .gitignore a step changed ('*.txt' in docs/) leaves out what it names from then on, but not a
# path a layer already recorded (as git ignores no tracked file): docs/notes.txt is still there,
# not gone, and the patch does not delete it (it did, and restore lost it: e2e/attack-ws).
expect_nogrep "a .gitignore changed by a step: docs/notes.txt, recorded before, is not gone" "docs/\.wh\.notes\.txt" "$T/l2"
expect_nogrep "nor deleted by the patch" "^deleted file mode|^--- a/docs/notes.txt" "$T/run.patch"

# the same workspace without the key: every path is in the layer (default false)
sed -i 's/gitignore: true, //' "$T/m.yaml"
dir2=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err2")
expect_grep "without it, ignored files are in the layers" "node_modules/pkg/index.js" <(tar --zstd -tf "$dir2/snapshots/0001.tar.zst")
sed -i 's/^snapshot: {/snapshot: { gitignore: maybe,/' "$T/m.yaml"
"$NS" validate "$T/m.yaml" >"$T/verr" 2>&1
expect_rc "gitignore: maybe is refused" 2 $?
done_tests
