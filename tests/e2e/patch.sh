#!/usr/bin/env bash
# patch: a night's whole change as a patch git apply takes. A job edits, adds, deletes, renames,
# makes binary files, symlinks, empty files, odd names and an executable; `diff --job` and
# jobs/<job>/changes.patch are the same bytes, `git apply --check` takes them on a clean checkout
# of the starting commit, and applied they give exactly the night's end tree (restore --step end).
# The patch is in SHA256SUMS and recorded in the job's chain: changing it fails audit --verify.
source "$(dirname "$0")/lib.sh"
needuserns patch
command -v git >/dev/null || { skip patch "git is not installed (ci/packages.txt has it)"; done_tests; exit; }
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
ws=$T/ws
mkdir -p "$ws/src" "$ws/old" "$ws/bin"
printf 'def add(a, b):\n    return a - b\n' >"$ws/src/calc.py"
for i in $(seq 1 200); do echo "line $i"; done >"$ws/long.txt"
echo gone >"$ws/old/gone.txt"
printf 'no newline at end' >"$ws/nonl.txt"
head -c 3000 /dev/urandom >"$ws/bin/blob.dat"
echo '#!/bin/sh' >"$ws/run.sh"
echo keep >"$ws/keep.txt"
ln -s keep.txt "$ws/link"
git -C "$ws" init -q && git -C "$ws" add -A && git -C "$ws" commit -qm start
cat >"$T/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  s: { provider: scripted, replies: [
    {tool_calls: [ {name: shell, arguments: {command: "sed -i 's/a - b/a + b/' src/calc.py && sed -i 's/^line 100$/line one hundred/' long.txt && rm -r old && printf 'now with newline\n' > nonl.txt"}} ]},
    {tool_calls: [ {name: write_file, arguments: {path: "docs/new.md", content: "# New\n\nmade by the night\n"}} ]},
    {tool_calls: [ {name: shell, arguments: {command: "head -c 5000 /dev/urandom > bin/blob.dat && printf 'a\\0b\\0' > bin/nul.bin && chmod +x run.sh && : > empty && rm link && ln -s src/calc.py link && ln -s nowhere dangling && echo odd > 'sp ace.txt' && echo tab > \"$(printf 'ta\\tb')\" && echo uni > 'ünï.txt' && mv keep.txt kept.txt"}} ]},
    {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: s, instructions: x, tools: [shell, write_file], approval: { default: allow } }
jobs:
  fix: { worker: w }
YAML
dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the night" 0 "$rc"; [ "$rc" = 0 ] || cat "$T/err"
"$NS" diff "$dir" --job fix >"$T/job.patch" 2>"$T/derr"
expect_rc "diff --job" 0 $?
check "changes.patch is the same bytes as diff --job" cmp -s "$T/job.patch" "$dir/jobs/fix/changes.patch"
"$NS" diff "$dir" >"$T/run.patch" 2>>"$T/derr"
expect_rc "diff of the run" 0 $?
check "a run of one job: its patch is the run's" cmp -s "$T/job.patch" "$T/run.patch"
expect_grep "changes.patch in SHA256SUMS" "  jobs/fix/changes.patch$" "$dir/SHA256SUMS"
expect_grep "a binary literal" "^GIT binary patch" "$T/job.patch"
expect_grep "a mode change" "^new mode 100755" "$T/job.patch"
expect_grep "a symlink" "^new file mode 120000" "$T/job.patch"
expect_grep "a quoted name" '^diff --git "a/ta\\tb"' "$T/job.patch"

# A clean checkout of the starting commit takes it, and gives exactly the end tree.
git clone -q "$ws" "$T/co"
git -C "$T/co" apply --check "$T/job.patch" 2>"$T/aerr"
expect_rc "git apply --check on the starting commit" 0 $?; cat "$T/aerr"
git -C "$T/co" apply "$T/job.patch"
"$NS" restore "$dir" --step end --to "$T/end" 2>/dev/null
expect_rc "restore --step end" 0 $?
tree() { (cd "$1" && find . -path ./.git -prune -o \( -type f -o -type l \) -print | LC_ALL=C sort | while IFS= read -r f; do
	if [ -L "$f" ]; then echo "L $f -> $(readlink "$f")"; else echo "F $f $(stat -c %A "$f" | cut -c4) $(sha256sum <"$f" | cut -c1-16)"; fi; done); }
expect_eq "applied, the checkout is the night's end tree" "$(tree "$T/end")" "$(tree "$T/co")"
expect_eq "git apply of the run's patch too" "" "$(git -C "$T/co" apply -R --check "$T/run.patch" 2>&1)"

# The patch is held to its event: changed (and SHA256SUMS made to agree), verification fails.
"$NS" audit "$dir" --verify >/dev/null 2>&1
expect_rc "the run verifies" 0 $?
cp -r "$dir" "$T/t1"
echo "+evil" >>"$T/t1/jobs/fix/changes.patch"
(cd "$T/t1" && sed -i '/changes.patch$/d' SHA256SUMS && sha256sum jobs/fix/changes.patch >>SHA256SUMS)
"$NS" audit "$T/t1" --verify >"$T/a1" 2>&1
expect_rc "a changed patch fails verification" 4 $?
expect_grep "and says which" "changes.patch: digest" "$T/a1"
cp -r "$dir" "$T/t2"
rm "$T/t2/jobs/fix/changes.patch"; sed -i '/changes.patch$/d' "$T/t2/SHA256SUMS"
"$NS" audit "$T/t2" --verify >"$T/a2" 2>&1
expect_rc "a removed patch fails verification" 4 $?
cp -r "$dir" "$T/t3"
sed -i 's/\([0-9a-f]\{64\}\)  jobs\/fix\/changes.patch/0000000000000000000000000000000000000000000000000000000000000000  jobs\/fix\/changes.patch/' "$T/t3/SHA256SUMS"
"$NS" audit "$T/t3" --verify >/dev/null 2>&1
expect_rc "a patch not matching SHA256SUMS fails verification" 4 $?

# A job that changed nothing leaves no patch; --job of no such job is a usage error.
cat >"$T/ro.yaml" <<'YAML'
version: 1
workspace: ws
snapshot: { exclude: [".git/**", ".git"] }
models:
  s: { provider: scripted, replies: [ {tool_calls: [ {name: shell, arguments: {command: "cat kept.txt && git status --short > /dev/null"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: s, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  look: { worker: w }
YAML
git -C "$T/co" add -A >/dev/null; git -C "$T/co" commit -qm night
dir2=$("$NS" run "$T/ro.yaml" --out "$T/runs" 2>"$T/err2")
expect_rc "a read-only night" 0 $?
check "no changes.patch when nothing changed" test ! -e "$dir2/jobs/look/changes.patch"
expect_eq "and diff --job prints nothing" "" "$("$NS" diff "$dir2" --job look 2>/dev/null)"
"$NS" diff "$dir2" --job nosuch >/dev/null 2>&1
expect_rc "diff --job of no such job" 2 $?
"$NS" diff "$dir2" --job ../x >/dev/null 2>&1
expect_rc "diff --job with a path" 2 $?
"$NS" diff "$dir.tar.zst" --job fix >/dev/null 2>&1
expect_rc "a missing archive" 2 $?
(cd "$(dirname "$dir")" && tar --zstd -cf "$T/run.tar.zst" "$(basename "$dir")")
"$NS" diff "$T/run.tar.zst" --job fix >"$T/tar.patch" 2>/dev/null
check "the run's archive gives the same patch" cmp -s "$T/tar.patch" "$T/job.patch"

# A 2 GiB sparse file made by a step is not carried by the patch (it was read whole, twice, and
# written as a 2.5 GiB literal): git's "Binary files ... differ" stands for it, with a warning,
# beside the small change that is carried.
mkdir -p "$T/big"
cat >"$T/big.yaml" <<'YAML'
version: 1
workspace: big
models:
  s: { provider: scripted, replies: [ {tool_calls: [ {name: shell, arguments: {command: "truncate -s 2G huge.bin && echo small > small.txt"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: s, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  mk: { worker: w }
YAML
dir3=$(timeout 120 "$NS" run "$T/big.yaml" --out "$T/runs" 2>"$T/err3")
expect_rc "a night that makes a 2 GiB sparse file ends (in time)" 0 $?
expect_grep "the big file stands as a binary change left out" '^Binary files /dev/null and b/huge.bin differ$' "$dir3/jobs/mk/changes.patch"
expect_grep "the small one is carried" '^\+small$' "$dir3/jobs/mk/changes.patch"
expect_grep "a warning says so" 'leaves out files over 16 MiB' "$T/err3"
check "the patch stays small" test "$(stat -c %s "$dir3/jobs/mk/changes.patch")" -lt 10000
"$NS" audit "$dir3" --verify >/dev/null 2>&1
expect_rc "and the run verifies" 0 $?

# A forged layer (valid, re-compressed, not what SHA256SUMS holds): diff --step refuses it as
# restore does, and shows none of its bytes.
python3 - "$dir3/snapshots/end.tar.zst" <<'PY'
import io, subprocess, sys, tarfile
p = sys.argv[1]
src = tarfile.open(fileobj=io.BytesIO(subprocess.run(["zstd", "-dc", p], capture_output=True).stdout))
out = io.BytesIO(); dst = tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT)
for m in src.getmembers():
    if m.isfile() and m.name.endswith("small.txt"):
        d = b"FORGED\n"; m.size = len(d); dst.addfile(m, io.BytesIO(d))
    else:
        dst.addfile(m, src.extractfile(m) if m.isfile() else None)
dst.close()
open(p, "wb").write(subprocess.run(["zstd", "-qc"], input=out.getvalue(), capture_output=True).stdout)
PY
"$NS" diff "$dir3" --step 1 >"$T/forged.out" 2>"$T/forged.err"
expect_rc "diff --step of a forged layer: exit 4" 4 $?
expect_grep "it names the layer" 'snapshots/end.tar.zst is not in SHA256SUMS as it is' "$T/forged.err"
expect_nogrep "and shows none of its bytes" 'FORGED' "$T/forged.out"

# An event log edited after sealing (a step moved to another job's count): diff --job reads a job's
# steps from it, so it refuses the log as verification does, and prints no patch.
ev="$dir/jobs/fix/events.jsonl.zst"
zstd -dcq "$ev" >"$T/ev.orig"
sed 's/"step":1,/"step":9,/' "$T/ev.orig" >"$T/ev.edited"
check "the edit changed the log" test "$(md5sum <"$T/ev.orig")" != "$(md5sum <"$T/ev.edited")"
zstd -qfo "$ev" "$T/ev.edited"
"$NS" diff "$dir" --job fix >"$T/edited.out" 2>"$T/edited.err"
expect_rc "diff --job of an edited event log: exit 4" 4 $?
expect_grep "it names the log" 'jobs/fix/events.jsonl.zst is not in SHA256SUMS as it is' "$T/edited.err"
expect_eq "and prints no patch" "" "$(cat "$T/edited.out")"
# Names git refuses in any patch (verify_path: .git in any case or with trailing dots, spaces or a
# ':' after it, git~1, a .gitmodules symlink) a model made in the workspace: left out, so that git
# still takes the rest (before: `git apply` refused the whole patch, "invalid path").
mkdir -p "$T/gws" && echo base >"$T/gws/base.txt"
git -C "$T/gws" init -q && git -C "$T/gws" add -A && git -C "$T/gws" commit -qm start
cat >"$T/g.yaml" <<'YAML'
version: 1
workspace: gws
models:
  s: { provider: scripted, replies: [
    {tool_calls: [ {name: shell, arguments: {command: "mkdir -p .GIT .Git. 'git~1' a/.gIt 'GIT~1 .' && for d in .GIT .Git. 'git~1' a/.gIt 'GIT~1 .'; do echo x > \"$d/x\"; done && echo s > '.git:x' && ln -s t .GITMODULES && ln -s t gitmod~2 && echo kept > .gitx && echo keep > a/ok.txt && ln -s t .gitattributes"}} ]},
    {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: s, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  odd: { worker: w }
YAML
gdir=$("$NS" run "$T/g.yaml" --out "$T/gruns" 2>"$T/gerr"); rc=$?
expect_rc "the night of names git refuses" 0 "$rc"
git clone -q "$T/gws" "$T/gco"
git -C "$T/gco" apply --check "$gdir/jobs/odd/changes.patch" 2>"$T/gaerr"
expect_rc "git apply --check takes the rest" 0 $?; cat "$T/gaerr"
git -C "$T/gco" apply "$gdir/jobs/odd/changes.patch" 2>/dev/null
expect_eq "what git takes is there, what it refuses is not" ".gitattributes .gitx a/ok.txt" \
	"$(cd "$T/gco" && find . -path ./.git -prune -o \( -type f -o -type l \) -print | sed 's|^\./||' | grep -v '^base.txt$' | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')"
done_tests
