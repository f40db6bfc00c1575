#!/usr/bin/env bash
# patchpart: a patch restores only the paths the layers between its two steps name (a job on a
# 100,000-file tree that changed one file writes a few files at its end, not 200,000). The patch
# must be what whole restores give, byte for byte: for seeded random nights (edits, deletions,
# folders renamed, files turned into folders and back, symlinks, modes, hard links, touches that
# change nothing; with the change feed and with the stat scan), every pair of steps is patched
# both ways and compared, and git apply of the whole night's patch on the first step's tree gives
# the end's tree.
. "$(dirname "$0")/lib.sh"
command -v git >/dev/null || { skip patchpart "git is not installed (ci/packages.txt has it)"; done_tests; exit; }
snapdrive_build
check "driver builds" test -x "$T/snapdrive"
[ -x "$T/snapdrive" ] || { cat "$T/cc.log"; done_tests; exit; }

# Files and symlinks of a tree (what a patch carries): type, exec bit, path, target, digest.
describe() {
	(cd "$1" && find . -mindepth 1 \( -type f -o -type l \) -printf '%y %p -> %l\n' | LC_ALL=C sort &&
		find . -type f -perm -u+x -printf 'x %p\n' | LC_ALL=C sort &&
		find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum)
}

base() { # a tree of folders, files, an executable, symlinks, a hard link pair, an empty folder
	mkdir -p "$1"
	python3 - "$1" <<'PY'
import os, sys
r = sys.argv[1]
for d in range(12):
    p = os.path.join(r, "d%d" % d, "s%d" % (d % 3))
    os.makedirs(p)
    for f in range(8):
        open(os.path.join(p, "f%d.txt" % f), "w").write("d%d f%d\n" % (d, f))
os.makedirs(os.path.join(r, "empty"))
open(os.path.join(r, "run.sh"), "w").write("#!/bin/sh\n")
os.chmod(os.path.join(r, "run.sh"), 0o755)
os.symlink("d1/s1/f1.txt", os.path.join(r, "link"))
os.symlink("d2", os.path.join(r, "dlink"))
open(os.path.join(r, "hard"), "w").write("linked\n")
os.link(os.path.join(r, "hard"), os.path.join(r, "d0", "hard2"))
PY
}

steps=6
for seed in 1 2 3 4 5 6; do
	feed=; [ $((seed % 2)) = 0 ] && feed=--feed
	ws=$T/ws$seed run=$T/run$seed
	base "$ws"
	cmds=()
	for s in $(seq $steps); do cmds+=("python3 $ROOT/tests/fixtures/mutate.py $seed $s"); done
	"$T/snapdrive" steps "$ws" "$run" --level 1 $feed -- "${cmds[@]}" >"$T/steps$seed" 2>&1
	rc=$?
	expect_rc "seed $seed: the night's layers" 0 $rc
	[ $rc = 0 ] || { cat "$T/steps$seed"; continue; }
	same=0 pairs=0 files=0
	for pair in "1 end" "1 3" "2 5" "3 4" "4 end" "$((steps + 1)) end" "1 $((steps + 1))"; do
		set -- $pair
		"$T/snapdrive" patch "$run" "$1" "$2" >"$T/part" 2>"$T/part.err"
		r1=$?
		"$T/snapdrive" patch "$run" "$1" "$2" --whole >"$T/whole" 2>"$T/whole.err"
		r2=$?
		pairs=$((pairs + 1))
		if [ $r1 = 0 ] && [ $r2 = 0 ] && cmp -s "$T/part" "$T/whole"; then
			same=$((same + 1))
			files=$((files + $(grep -c '^diff --git' "$T/part")))
		else
			echo "seed $seed, steps $1 to $2: exit $r1 / $r2"; cat "$T/part.err" "$T/whole.err"
			diff "$T/whole" "$T/part" | head -20
		fi
	done
	expect_eq "seed $seed ${feed:-(scan)}: every pair of steps patches as whole restores do" "$pairs" "$same"
	check "seed $seed: and the patches are not empty ($files files)" test "$files" -gt 0
	# git apply of the night's patch on the first step's tree gives the end's tree
	"$NS" restore "$run" --step 1 --to "$T/a$seed" >/dev/null 2>&1 &&
		"$NS" restore "$run" --step end --to "$T/b$seed" >/dev/null 2>&1
	expect_rc "seed $seed: both ends restore" 0 $?
	"$T/snapdrive" patch "$run" 1 end >"$T/night$seed.patch" 2>/dev/null
	(cd "$T/a$seed" && git apply --unsafe-paths "$T/night$seed.patch") 2>"$T/apply.err"
	expect_rc "seed $seed: git apply takes the night's patch" 0 $?
	[ -s "$T/apply.err" ] && head -5 "$T/apply.err"
	expect_eq "seed $seed: and gives the end's tree" "$(describe "$T/b$seed")" "$(describe "$T/a$seed")"
done

# One change in a tree of 3,000 files: the patch names it alone, and its restores write only it
# (and the folders above it), not the tree.
ws=$T/big run=$T/bigrun
mkdir -p "$ws"
python3 -c "
import os
for d in range(30):
    os.makedirs('$ws/m%d' % d)
    for f in range(100): open('$ws/m%d/f%d' % (d, f), 'w').write('x%d\n' % f)"
"$T/snapdrive" steps "$ws" "$run" --level 1 -- 'echo changed >> m7/f42' >/dev/null 2>&1
"$T/snapdrive" patch "$run" 1 end >"$T/one.patch" 2>"$T/one.err"
expect_rc "a one-file change in 3,000 files" 0 $?
expect_eq "the patch names that file alone" "diff --git a/m7/f42 b/m7/f42" "$(grep '^diff --git' "$T/one.patch")"
"$T/snapdrive" patch "$run" 1 end --whole >"$T/onew.patch" 2>/dev/null
check "as whole restores say" cmp -s "$T/one.patch" "$T/onew.patch"
done_tests
