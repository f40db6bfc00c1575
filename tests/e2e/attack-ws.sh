#!/usr/bin/env bash
# attack-ws: an outside test of what a hostile workspace does to a job's patch, its restore and
# the programs that read them. Each case names the finding it guards.
source "$(dirname "$0")/lib.sh"
if ! command -v git >/dev/null || ! command -v python3 >/dev/null; then
	skip attack-ws "git and python3 are needed (ci/packages.txt has them)"; done_tests; exit
fi
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t

# night NAME COMMAND [SETUP]: a git repo $T/NAME/ws holding base.txt (and what SETUP makes), a night
# (with the manifest lines $EXTRA, and $JOB inside the job's braces) whose one shell step (sandbox
# none) runs COMMAND there (and a second one $THEN, when set); its run directory in $dir, its
# stderr in $T/NAME/err, and a clean clone of the starting commit in $T/NAME/co.
night() {
	local n=$1 cmd
	mkdir -p "$T/$n/ws" && echo base >"$T/$n/ws/base.txt" && (cd "$T/$n/ws" && eval "${3:-}")
	git -C "$T/$n/ws" init -q && git -C "$T/$n/ws" add -A && git -C "$T/$n/ws" commit -qm start
	cmd=$(python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$2")
	local then=${THEN:+"{tool_calls: [ {name: shell, arguments: {command: \"$THEN\"}} ]},"}
	cat >"$T/$n/m.yaml" <<YAML
version: 1
workspace: ws
sandbox: { backend: none }
${EXTRA:-}
models:
  s: { provider: scripted, replies: [
    {tool_calls: [ {name: shell, arguments: {command: $cmd}} ]},
    $then
    {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: s, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w ${JOB:-} }
YAML
	dir=$("$NS" run "$T/$n/m.yaml" --out "$T/$n/runs" 2>"$T/$n/err")
	git clone -q "$T/$n/ws" "$T/$n/co"
}

# 1. git (core.protectNTFS, on by default) reads a backslash in a name as a folder separator and
#    refuses .git or git~1 after one ('.git\x', 'x\.git', 'x\git~1 .'), '.git' followed by spaces or
#    dots and then a ':' ('.git .:x'), and a symlink with a fallback 8.3 name of .gitmodules
#    ('gi7eba~1', '~1234567') or '.gitmodules' after a backslash. The patch carried them, and
#    `git apply --check` refused the whole patch ("invalid path"): one file the model made kept
#    every change from the pull request.
night bslash "echo x > '.git\\x' && echo x > 'x\\.git' && echo x > 'x\\git~1 .' && echo x > '.git .:x' && mkdir 'd\\.GIT' && echo x > 'd\\.GIT/f' && ln -s t gi7eba~1 && ln -s t '~1234567' && ln -s t 'a\\.gitmodules' && echo kept > gi7eba~1.txt && echo kept > 'back\\slash' && ln -s t GI7EBA~A && echo ok > ok.txt"
git -C "$T/bslash/co" apply --check "$dir/jobs/j/changes.patch" 2>"$T/bslash/aerr"
expect_rc "names git refuses after a backslash: git apply --check takes the rest" 0 $?; head -3 "$T/bslash/aerr"
git -C "$T/bslash/co" apply "$dir/jobs/j/changes.patch" 2>/dev/null
expect_eq "what git takes is there, what it refuses is not" "GI7EBA~A back\\slash gi7eba~1.txt ok.txt" \
	"$(cd "$T/bslash/co" && find . -path ./.git -prune -o \( -type f -o -type l \) -print | sed 's|^\./||' | grep -v '^base.txt$' | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')"

# 1b. git holds every folder on a symlink's path to the symlink's names (verify_path takes the
#    entry's mode for each part): a link in a folder named .gitmodules (or GITMOD~1, gi7eba~1) is
#    refused, and with it the whole patch; only the link's own name was checked.
night modfolder "mkdir -p .gitmodules GITMOD~1 gi7eba~1 'a\\.gitmodules' && ln -s t .gitmodules/l && ln -s t GITMOD~1/l && ln -s t gi7eba~1/l && ln -s t 'a\\.gitmodules/l' && echo kept > .gitmodules/f && echo ok > ok.txt"
git -C "$T/modfolder/co" apply --check "$dir/jobs/j/changes.patch" 2>"$T/modfolder/aerr"
expect_rc "a link in a folder named .gitmodules: git apply --check takes the rest" 0 $?; head -3 "$T/modfolder/aerr"
git -C "$T/modfolder/co" apply "$dir/jobs/j/changes.patch" 2>/dev/null
expect_eq "the file beside the link is there" ".gitmodules/f ok.txt" \
	"$(cd "$T/modfolder/co" && find . -path ./.git -prune -o \( -type f -o -type l \) -print | sed 's|^\./||' | grep -v '^base.txt$' | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')"

# 1c. With core.protectHFS, on by default on macOS, git also refuses .git (and for a link
#    .gitmodules) with code points HFS+ ignores anywhere in it (U+200C, U+FEFF, ...): a file in
#    '.g<U+200C>it/' made git apply on a Mac refuse the whole patch.
hfscmd=$(cat <<'CMD'
python3 -c 'import os; os.mkdir(".g\u200cit"); open(".g\u200cit/x", "w").write("x"); open("\ufeff.GIT", "w").write("x"); os.symlink("t", ".gitmodules\u206f"); open(".git\u200cx", "w").write("kept"); open("ok.txt", "w").write("ok")'
CMD
)
night hfs "$hfscmd"
git -C "$T/hfs/co" -c core.protectHFS=true apply --check "$dir/jobs/j/changes.patch" 2>"$T/hfs/aerr"
expect_rc "names HFS+ reads as .git: git apply --check (protectHFS) takes the rest" 0 $?; head -3 "$T/hfs/aerr"
expect_grep "the name HFS+ does not read as .git is carried" $'^diff --git "a/.git\\\\342\\\\200\\\\214x"' "$dir/jobs/j/changes.patch"

# 2. A file over 16 MiB was left out of the patch, but every smaller one was carried whole, as an
#    uncompressed literal (5/4 of its bytes) or hunks, into one buffer: 40 sparse files of 16 MiB
#    (no block used, nothing against snapshot.max_size) made an 865 MB patch, 2.1 GB of the
#    runner's memory and 30 s; a thousand would be 21 GB. Now a file whose bytes could take the
#    patch past 64 MiB is not carried either: a 'Binary files ... differ' line stands for it.
night sparse 'for i in 1 2 3 4 5 6 7 8; do truncate -s 15M s$i; done && echo small > small.txt'
expect_rc "a night of eight sparse 15 MiB files" 0 $?
check "the patch stays within 64 MiB and a little" test "$(stat -c %s "$dir/jobs/j/changes.patch")" -lt $((66 << 20))
expect_grep "the rest stand as binary changes left out" '^Binary files /dev/null and b/s8 differ$' "$dir/jobs/j/changes.patch"
expect_grep "the small one is carried" '^\+small$' "$dir/jobs/j/changes.patch"
expect_grep "a warning says so" 'changes.patch leaves out' "$T/sparse/err"
# 2b. The 64 MiB bounded the files' bytes, not their names: past it, each changed file still added
#    its 'diff --git' and 'Binary files' lines, four quoted copies of its path (a byte over 0x7f is
#    four): 3,000 empty files of 1,250-byte paths made a 30 MB patch, so 100,000 a gigabyte. The
#    files after the line that passes 64 MiB are no longer listed.
night names 'python3 -c "
import os
n = b\"\\x80\" * 250
d = b\"/\".join([n] * 4)
os.makedirs(d)
for i in range(9000):
    open(d + b\"/\" + str(i).encode() + n[:240], \"wb\").close()
"'
expect_rc "a night of 9,000 empty files with long names" 0 $?
check "the patch stays within 64 MiB and a little" test "$(stat -c %s "$dir/jobs/j/changes.patch")" -lt $((66 << 20))
expect_grep "it ends with a binary change left out" '^Binary files /dev/null and ' "$(tail -c 20000 "$dir/jobs/j/changes.patch" | tail -n1 > "$T/names/last"; echo "$T/names/last")"
expect_grep "a warning says so" 'changes.patch leaves out' "$T/names/err"

# 3. A path of 4096 bytes or more (20 folders of 250-byte names, made one cd at a time) went into
#    the layers, which restore refuses whole ("too long; refusing it"): `restore --step end` failed,
#    and so did the job's patch ("its changes.patch was not made"), for every other change too.
#    Now the scan leaves such a path out, named in the snapshot's skipped list like a folder too
#    deep, and the rest is stored, restored and patched.
night long 'n=$(printf "%0250d" 0); (for i in $(seq 1 20); do mkdir $n && cd $n || exit 1; done; echo deep > f) ; echo top > top.txt'
expect_nogrep "the job's patch is made" 'changes.patch was not made' "$T/long/err"
expect_grep "it carries the rest" '^\+top$' "$dir/jobs/j/changes.patch"
"$NS" restore "$dir" --step end --to "$T/long/end" >/dev/null 2>"$T/long/rerr"
expect_rc "restore --step end" 0 $?
check "gives the rest back" cmp -s "$T/long/end/top.txt" "$T/long/ws/top.txt"
python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["end_skipped"])' "$dir/run.json" >"$T/long/skipped" 2>&1
expect_grep "the path left out is named, with why" '4096' "$T/long/skipped"

# 4. A path just short of 4096 bytes is stored and restored (by descriptors), but the patch read the
#    restored trees by whole paths, /tmp/... before it: past PATH_MAX, lstat failed and the file
#    was silently not in changes.patch, though the run and its layers hold it. Now the patch reads
#    the trees by descriptors too.
night near 'python3 -c "
import os
fd = os.open(\".\", os.O_RDONLY)
for i in range(16):
    os.mkdir(\"0\" * 250, dir_fd=fd); fd = os.open(\"0\" * 250, os.O_RDONLY, dir_fd=fd)
os.mkdir(\"1\" * 74, dir_fd=fd); fd = os.open(\"1\" * 74, os.O_RDONLY, dir_fd=fd)
f = os.open(\"ffff\", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd); os.write(f, b\"deep\\n\")
"'
expect_eq "a file at a path of 4095 bytes is in the patch" 1 "$(grep -c '^+deep$' "$dir/jobs/j/changes.patch")"
git -C "$T/near/co" apply --check "$dir/jobs/j/changes.patch" 2>"$T/near/aerr"
expect_rc "which git takes" 0 $?; grep "^error" "$T/near/aerr" | head -3

# 5. linediff kept a copy of its whole diagonal array for every edit it tried: (maxedits + 1) x
#    (2 maxedits + 3) longs. `diff RUN --step N` tried 20,000 edits on texts up to 64 KiB, so a step
#    that turns 32,768 lines of "a" into as many of "b" made it take 6.4 GB (it aborted under
#    ulimit -v 3 GB); the report's 4,000 took 256 MB a file. Now each edit keeps only the diagonals
#    it reached (2d + 1 ints), and `diff` tries 4,000 edits as the report does: 64 MB at most.
night lines 'yes b | head -c 65536 > f.txt' 'yes a | head -c 65536 > f.txt'
if asan; then
	"$NS" diff "$dir" --step 1 >"$T/lines/out" 2>&1
else
	(ulimit -v 400000; "$NS" diff "$dir" --step 1 >"$T/lines/out" 2>&1)
fi
expect_rc "diff --step of 32,768 changed lines, within 400 MB" 0 $?
expect_grep "says they are too far apart" '^\(more than 4000 lines differ' "$T/lines/out"

# 6. A text's lines cost linediff 16 bytes each, and a script found 24 bytes per line of both: a
#    step turning a 16 MiB file of empty lines into one with a line changed made the runner's patch
#    take 1.35 GB, and under ulimit -v 1 GB the run aborted (exit 134) before it was sealed. Now a
#    text of more than 2^20 lines is no text to linediff: the patch carries it as a literal.
night nl 'python3 -c "open(\"f\", \"w\").write(\"\\n\" * (8 << 20) + \"x\\n\" + \"\\n\" * ((8 << 20) - 11))"' \
	'python3 -c "open(\"f\", \"w\").write(\"\\n\" * ((16 << 20) - 8))"' >/dev/null
if ! asan; then
	rm -rf "$T/nl/runs" && git -C "$T/nl/ws" checkout -q -- f && (ulimit -v 1000000; "$NS" run "$T/nl/m.yaml" --out "$T/nl/runs" >/dev/null 2>"$T/nl/err")
	expect_rc "a 16 MiB file of 16 M lines, one changed: the run ends within 1 GB" 0 $?
fi
check "its patch is made" test -s "$(ls -d "$T"/nl/runs/*/)jobs/j/changes.patch"

# 7. With snapshot.gitignore, a path was left out of a layer whenever the workspace's .gitignore
#    files matched it, as for an untracked file; the model writes those files. A step that changed
#    a committed src.c and appended "src.c" to .gitignore gave a layer without src.c: the patch
#    deleted it (git status says modified), restore and diff lost it, and the change the step made
#    to it was in no record. Now a path the last layer recorded is kept whatever the rules say, as
#    git keeps a tracked file.
EXTRA='snapshot: { gitignore: true }' night ign "echo 'int main(){evil();}' > src.c && echo src.c >> .gitignore && echo hi > new.txt" \
	"echo 'int main(){}' > src.c && echo '*.log' > .gitignore"
expect_nogrep "the patch deletes no file the step changed" '^deleted file mode' "$dir/jobs/j/changes.patch"
expect_grep "it carries src.c's change" '^\+int main\(\)\{evil\(\);\}$' "$dir/jobs/j/changes.patch"
git -C "$T/ign/co" apply "$dir/jobs/j/changes.patch" 2>/dev/null
check "applied, src.c is the workspace's" cmp -s "$T/ign/co/src.c" "$T/ign/ws/src.c"

# 8. A job's patch restores its two states into folders of its own under TMPDIR, made 0700 by
#    mkdtemp, and the restore then gave each folder the mode of the workspace's root: a step's
#    `chmod 1777 .` made /tmp/nightshift-patch-XXXXXX world-writable while the patch was read from
#    it, so any local user could add a file to changes.patch. Now each state is restored into a
#    folder inside the private one. (Seen through strace -y: the folder whose mode becomes 1777.)
if command -v strace >/dev/null; then
	night rootmode 'chmod 1777 . && echo x > x.txt'
	mkdir -p "$T/rootmode/tmp"
	TMPDIR=$T/rootmode/tmp strace -f -y -e trace=fchmod -o "$T/rootmode/st" "$NS" diff "$dir" --job j >/dev/null 2>&1
	expect_grep "the restored root takes the workspace's 1777" '01777' "$T/rootmode/st"
	expect_nogrep "but no folder right under TMPDIR does" "<$T/rootmode/tmp/nightshift-patch-[^/]*>, 01777" "$T/rootmode/st"
fi

# 9. A declared file (files:) is copied into the run whole, holes written as zeros, and nothing
#    bounded it: snapshot.max_size counts blocks, and a sparse file has none. A step's
#    `truncate -s 1T out.bin` at a declared name would write a terabyte into the run folder. Now
#    the declared files' bytes are bounded by snapshot.max_size too: past it the job fails, before
#    a byte is copied, naming the file.
EXTRA='snapshot: { max_size: 8M }' JOB=', files: [out.bin]' night declared 'truncate -s 64M out.bin'
expect_rc "a declared sparse file of 64 MiB over max_size 8M: the job fails" 1 "$(python3 -c 'import json, sys; print(1 if json.load(open(sys.argv[1]))["jobs"]["j"]["status"] == "failed" else 0)' "$dir/run.json")"
check "nothing of it is copied" test ! -e "$dir/jobs/j/files/out.bin"
expect_grep "the job's error names the file and the bound" 'out.bin.*max_size' "$T/declared/err"

# 10. A scan held a time as nanoseconds in an int64, which ends in 2262: a step's `touch -d 2500-06-01`
#    (ext4 keeps up to 2446, tmpfs anything) overflowed it (undefined behaviour; here it wrapped),
#    and the layer said the file was last changed in 1861, restore put 1901. Now a time past the
#    range is held at its end: restored, the file is in 2262 at least, never before 1970.
night future 'echo f > fut && touch -d "2500-06-01 12:00:00" fut && echo p > past && touch -d "1600-01-01" past'
"$NS" restore "$dir" --step end --to "$T/future/end" >/dev/null 2>&1
expect_rc "restore --step end" 0 $?
if [ "$(stat -c %Y "$T/future/ws/fut")" -gt 9223372036 ]; then
	check "a file from after 2262 is not restored into the past" test "$(stat -c %Y "$T/future/end/fut")" -ge 9223372036
fi
if [ "$(stat -c %Y "$T/future/ws/past")" -lt -9223372036 ]; then
	check "nor one from before 1677 into the future" test "$(stat -c %Y "$T/future/end/past")" -le -9223372036
fi

# 11. What a layer left out was listed whole in every step's snapshot event, and a fifo is left out of
#    every layer: 400,000 fifos made in one step put 35 MB into each later step's event (355 MB for
#    10 steps of `true`), 0.7 s a step, 932 MB of runner memory. Now an event lists the first 100
#    and counts them all (skipped_total); run.json's end_skipped still names every one.
THEN=true night fifos 'mkdir f && cd f && seq 1 3000 | xargs mkfifo'
zstd -dcq "$dir/jobs/j/events.jsonl.zst" | python3 -c '
import json, sys
for line in sys.stdin:
    e = json.loads(line)
    if e.get("type") == "snapshot" and e.get("skipped_total"):
        print(len(e["skipped"]), e["skipped_total"])' >"$T/fifos/counts"
expect_eq "the snapshot event of step 2 lists 100 of its 3000 fifos, and counts them" "100 3000" "$(tail -1 "$T/fifos/counts")"
expect_eq "run.json's end_skipped names every one" 3000 "$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["end_skipped"]))' "$dir/run.json")"

done_tests
