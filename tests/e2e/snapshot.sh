#!/usr/bin/env bash
# snapshot: layers against GNU tar (every layer lists with `tar --zstd -tvf`, the full layers
# extract with GNU tar to the very tree), determinism, and `nightshift restore` flags and codes.
# Layers are made by bench/snapdrive.c (built here against libnightshift.a) so this runs before
# the runner is wired up; the restore command is checked through $NIGHTSHIFT.
. "$(dirname "$0")/lib.sh"

command -v tar >/dev/null && tar --version 2>/dev/null | grep -q 'GNU tar' || { skip snapshot "GNU tar is not installed"; done_tests; exit; }
command -v zstd >/dev/null || { skip snapshot "zstd is not installed"; done_tests; exit; }

snapdrive_build
check "driver builds" test -x "$T/snapdrive"
[ -x "$T/snapdrive" ] || { cat "$T/cc.log"; done_tests; exit; }

# A description of a tree: type, mode, path, link target, and content digest; sorted.
describe() {
	(cd "$1" && find . -mindepth 1 ! -type p ! -type s -printf '%y %m %p -> %l\n' | LC_ALL=C sort &&
		find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum)
}
# Hard links: for each file with several links, the sorted list of its paths.
links() {
	(cd "$1" && find . -type f -links +1 -printf '%i %p\n' | LC_ALL=C sort | awk '{a[$1]=a[$1] " " $2} END {for (k in a) print a[k]}' | LC_ALL=C sort)
}

ws=$T/ws
mkdir -p "$ws/src/deep/er/still" "$ws/empty" "$ws/bin" "$ws/rm-me/sub"
printf 'hello\n' >"$ws/src/a.c"
printf '#!/bin/sh\necho hi\n' >"$ws/bin/run" && chmod 755 "$ws/bin/run"
printf 'secret\n' >"$ws/src/private" && chmod 600 "$ws/src/private"
printf 'ro\n' >"$ws/src/deep/readonly" && chmod 444 "$ws/src/deep/readonly"
head -c 300000 /dev/urandom >"$ws/src/deep/er/still/blob"
ln "$ws/src/a.c" "$ws/src/hardlink.c"
ln -s a.c "$ws/src/link-rel"
ln -s /etc/hostname "$ws/src/link-abs"
ln -s nowhere "$ws/src/link-dangling"
ln -s deep "$ws/src/link-dir"
long=$(printf 'n%.0s' $(seq 1 150))
printf 'long\n' >"$ws/src/$long"
printf 'utf8\n' >"$ws/src/café"
printf 'looks like a whiteout\n' >"$ws/src/.wh.a.c"
printf 'x\n' >"$ws/rm-me/sub/x"
chmod 1777 "$ws/empty"
mkfifo "$ws/src/fifo"
mkdir -p "$ws/.git/objects" && printf 'ref: refs/heads/main\n' >"$ws/.git/HEAD"
cp -a "$ws" "$T/before1"
cp -a "$ws" "$T/copy"

run=$T/run
"$T/snapdrive" steps "$ws" "$run" --level 3 --threads 2 -- \
	"printf 'changed\n' >> src/a.c && rm -rf rm-me && mv src/private src/moved && chmod 700 bin/run && cp -a . '$T/before2'" \
	"rm -rf src/deep && printf 'now a file\n' > src/deep && rm src/link-rel && mkdir src/link-rel && ln -s ../bin bin/up && cp -a . '$T/before3'" \
	"true" >"$T/steps.out" 2>"$T/steps.err"
check "snapdrive steps" test -s "$run/snapshots/end.tar.zst"
expect_grep "fifo is skipped" 'layer 0001 .* skipped 1$' "$T/steps.out"
expect_grep "an unchanged workspace gives an empty layer" 'layer 0004 .* added 0 changed 0 deleted 0 ' "$T/steps.out"
rm -f "$T/before2/src/fifo" "$T/before3/src/fifo"

# Every layer opens with GNU tar, shows uid/gid 0 with no names, and says nothing on stderr.
for l in "$run"/snapshots/*.tar.zst; do
	n=$(basename "$l")
	tar --zstd -tvf "$l" >"$T/list.$n" 2>"$T/err.$n"
	expect_rc "tar --zstd -tvf $n" 0 $?
	expect_eq "$n: no warnings" "" "$(cat "$T/err.$n")"
	expect_nogrep "$n: owner is 0/0" '^[^ ]+ [^0]|^[^ ]+ 0/[^0]' "$T/list.$n"
done
expect_grep ".git is included by default" ' \.git/HEAD$' "$T/list.0001.tar.zst"
expect_grep "layer 2 has a whiteout for the removed directory" '\.wh\.rm-me$' "$T/list.0002.tar.zst"
expect_grep "layer 3 has the directory replaced by a file" '^-.* src/deep$' "$T/list.0003.tar.zst"
expect_nogrep "layer 4 is empty" '.' "$T/list.0004.tar.zst"
expect_grep "entries are sorted, mtimes kept" 'src/a\.c' "$T/list.0001.tar.zst"
check "entries are sorted by path bytes" bash -c "tar --zstd -tf '$run/snapshots/0001.tar.zst' | sed 's|/\$||' | LC_ALL=C sort -c"

# The full layer extracts with GNU tar to the very tree (end holds only what changed after the
# last layer: `nightshift restore --step end` below applies the chain).
for pair in "0001:$T/before1"; do
	name=${pair%%:*} want=${pair#*:}
	mkdir -p "$T/x.$name"
	tar --zstd -xf "$run/snapshots/$name.tar.zst" -C "$T/x.$name" 2>"$T/xerr.$name"
	expect_rc "GNU tar extracts $name" 0 $?
	rm -f "$want/src/fifo"
	expect_eq "GNU tar's $name is the tree" "$(describe "$want")" "$(describe "$T/x.$name")"
	expect_eq "GNU tar's $name keeps hard links" "$(links "$want")" "$(links "$T/x.$name")"
	check "GNU tar's $name keeps mtimes" bash -c "cd '$want' && find . -type f ! -name fifo -printf '%T@ %p\n' | sort > '$T/mt.want' && cd '$T/x.$name' && find . -type f -printf '%T@ %p\n' | sort > '$T/mt.got' && cmp -s '$T/mt.want' '$T/mt.got'"
done

# The same tree gives the same bytes, wherever it is, with any number of threads.
"$T/snapdrive" steps "$T/copy" "$T/run2" --level 3 --threads 2 >/dev/null 2>&1
check "same tree, same bytes" cmp -s "$run/snapshots/0001.tar.zst" "$T/run2/snapshots/0001.tar.zst"
"$T/snapdrive" steps "$T/copy" "$T/run3" --level 3 --threads 1 >/dev/null 2>&1
check "same bytes with another thread count" cmp -s "$run/snapshots/0001.tar.zst" "$T/run3/snapshots/0001.tar.zst"

# sha256sum -c agrees with the SHA256SUMS the layers were written with.
check "sha256sum -c SHA256SUMS" bash -c "cd '$run' && sha256sum -c --quiet SHA256SUMS"

# The same steps with the change feed on (as runs on the namespace backend have it), plus a
# write through a shared mapping and a folder moved away, changed and moved back.
fws=$T/fws
cp -a "$T/copy" "$fws"
rm -f "$fws/src/fifo"
"$T/snapdrive" steps "$fws" "$T/frun" --level 3 --threads 2 --feed -- \
	"printf 'changed\n' >> src/a.c && rm -rf rm-me && mv src/private src/moved && chmod 700 bin/run && cp -a . '$T/fbefore2'" \
	"rm -rf src/deep && printf 'now a file\n' > src/deep && rm src/link-rel && mkdir src/link-rel && ln -s ../bin bin/up && cp -a . '$T/fbefore3'" \
	"true" \
	"python3 -c \"import mmap, os; f = os.open('src/a.c', os.O_RDWR); m = mmap.mmap(f, 0); m[0:1] = b'H'; m.flush(); m.close(); os.close(f)\" && cp -a . '$T/fbefore5'" \
	"mv src away && printf 'while away\n' > away/new && printf 'x' >> away/moved && mv away src && cp -a . '$T/fbefore6'" \
	>"$T/fsteps.out" 2>"$T/fsteps.err"
if grep -q 'no change feed' "$T/fsteps.err"; then
	skip "snapshots with the change feed" "$(cat "$T/fsteps.err")"
else
	check "snapdrive steps --feed" test -s "$T/frun/snapshots/end.tar.zst"
	expect_grep "with the feed, an unchanged workspace gives an empty layer" 'layer 0004 .* added 0 changed 0 deleted 0 ' "$T/fsteps.out"
	expect_grep "with the feed, the write through a mapping is in layer 0006" 'layer 0006 .* changed [1-9]' "$T/fsteps.out"
	if [ -x "$NS" ]; then
		for pair in "1:$T/copy" "2:$T/fbefore2" "3:$T/fbefore3" "4:$T/fbefore3" "5:$T/fbefore5" "6:$T/fbefore6" "end:$fws"; do
			step=${pair%%:*} want=${pair#*:}
			rm -f "$want/src/fifo"
			"$NS" restore "$T/frun" --step "$step" --to "$T/fr.$step" 2>"$T/fr.$step.err"
			expect_rc "with the feed: restore --step $step" 0 $?
			expect_eq "with the feed: restore --step $step is the tree" "$(describe "$want")" "$(describe "$T/fr.$step")"
		done
	fi
fi

# nightshift restore: the trees before steps 1..3 and after the last, plus flags and codes.
if [ ! -x "$NS" ]; then
	skip "nightshift restore" "$NS is not built"
	done_tests
	exit
fi
for pair in "1:$T/before1" "2:$T/before2" "3:$T/before3" "4:$T/before3" "end:$ws"; do
	step=${pair%%:*} want=${pair#*:}
	"$NS" restore "$run" --step "$step" --to "$T/r.$step" 2>"$T/r.$step.err"
	expect_rc "restore --step $step" 0 $?
	expect_eq "restore --step $step is the tree" "$(describe "$want")" "$(describe "$T/r.$step")"
	expect_eq "restore --step $step keeps hard links" "$(links "$want")" "$(links "$T/r.$step")"
done

# RUN may be a .tar.zst of the run directory.
tar --zstd -cf "$T/run.tar.zst" -C "$T" run
"$NS" restore "$T/run.tar.zst" --step 2 --to "$T/r.tar" 2>"$T/r.tar.err"
expect_rc "restore from run.tar.zst" 0 $?
expect_eq "restore from run.tar.zst is the tree" "$(describe "$T/before2")" "$(describe "$T/r.tar")"

"$NS" restore "$run" --to "$T/r.x" 2>"$T/e1"; expect_rc "missing --step" 2 $?
expect_grep "missing --step is named" '--step' "$T/e1"
"$NS" restore "$run" --step 2 2>"$T/e2"; expect_rc "missing --to" 2 $?
expect_grep "missing --to is named" '--to' "$T/e2"
"$NS" restore "$run" --step two --to "$T/r.x" 2>"$T/e3"; expect_rc "bad --step" 2 $?
expect_grep "bad --step is named" '--step' "$T/e3"
"$NS" restore "$run" --step 0 --to "$T/r.x" 2>"$T/e4"; expect_rc "--step 0" 2 $?
"$NS" restore "$run" --step 1 --to "$T/r.x" --frobnicate 2>"$T/e5"; expect_rc "unknown flag" 2 $?
expect_grep "unknown flag is named" '--frobnicate' "$T/e5"
"$NS" restore --step 1 --to "$T/r.x" 2>"$T/e6"; expect_rc "missing RUN" 2 $?
"$NS" restore "$run" --step 1 --to "$T/r.1" 2>"$T/e7"; expect_rc "non-empty target" 2 $?
expect_grep "non-empty target says --force" 'force' "$T/e7"
"$NS" restore "$run" --step=1 --to="$T/r.1" --force 2>"$T/e8"; expect_rc "--force and --flag=value" 0 $?
"$NS" restore "$T/nowhere" --step 1 --to "$T/r.y" 2>"$T/e9"; expect_rc "missing run" 2 $?
"$NS" restore --help >"$T/help"; expect_rc "--help" 0 $?
expect_grep "--help shows usage" 'restore RUN --step N\|end --to DIR' "$T/help"

# A layer whose bytes do not match SHA256SUMS (a valid empty frame added), or that is damaged:
# exit 4, the layer named.
cp -a "$run" "$T/bad"
: | zstd -qc >>"$T/bad/snapshots/0002.tar.zst"
"$NS" restore "$T/bad" --step 2 --to "$T/r.bad" 2>"$T/e10"; expect_rc "digest mismatch" 4 $?
expect_grep "digest mismatch names the layer" 'snapshots/0002\.tar\.zst: digest mismatch' "$T/e10"
printf 'garbage' | dd of="$T/bad/snapshots/0002.tar.zst" bs=1 seek=40 conv=notrunc 2>/dev/null
"$NS" restore "$T/bad" --step 2 --to "$T/r.bad1" --force 2>"$T/e10b"; expect_rc "damaged layer" 4 $?
expect_grep "damaged layer is named" 'snapshots/0002\.tar\.zst' "$T/e10b"
grep -v ' snapshots/0003\.tar\.zst$' "$run/SHA256SUMS" >"$T/bad/SHA256SUMS"
cp "$run/snapshots/0002.tar.zst" "$T/bad/snapshots/0002.tar.zst"
"$NS" restore "$T/bad" --step 3 --to "$T/r.bad2" 2>"$T/e11"; expect_rc "layer not in SHA256SUMS" 4 $?
expect_grep "unlisted layer is named" 'snapshots/0003\.tar\.zst' "$T/e11"
check "nothing written for an unlisted layer" test ! -e "$T/r.bad2"

done_tests
