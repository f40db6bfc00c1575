#!/usr/bin/env bash
# refusedclean: a restore refused leaves nothing, whoever runs it. A stranger's chain is applied
# layer by layer when a newer layer holds a hard link to an older one's file; its second layer
# makes a folder of mode 000 holding a file SHA256SUMS does not vouch for, and its digest is wrong.
# The restore is refused (exit 4), and before, as a user who is not root, the folder's mode was set
# from the refused layer and the cleanup could not open it: the target stayed, with the file. Now a
# refused layer's folder modes are not set, and the cleanup opens up a folder it cannot read.
# A refused layer nested 1,400 folders deep (within PATH_MAX): the cleanup held a descriptor a
# level and ran out under `ulimit -n 256`, leaving the file; now it holds at most 32.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
if ! command -v zstd >/dev/null || ! command -v python3 >/dev/null; then
	skip refusedclean "zstd and python3 are needed"; done_tests; exit
fi
as=()
if [ "$(id -u)" = 0 ]; then
	if ! command -v setpriv >/dev/null; then
		skip refusedclean "as root, setpriv is needed to run restore as another user"; done_tests; exit
	fi
	as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	chmod 0755 "$T"
fi
mkdir -p "$T/run/snapshots" "$T/out0"
python3 - "$T" <<'PY'
import io, sys, tarfile
t = sys.argv[1]
def add(tf, name, kind=tarfile.REGTYPE, data=b"", mode=0o644, link=""):
    i = tarfile.TarInfo(name); i.type = kind; i.mode = mode; i.mtime = 1700000000
    i.size = len(data) if kind == tarfile.REGTYPE else 0; i.linkname = link
    tf.addfile(i, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
with tarfile.open(t + "/l1.tar", "w", format=tarfile.PAX_FORMAT) as tf:
    add(tf, "t", data=b"vouched\n")
with tarfile.open(t + "/l2.tar", "w", format=tarfile.PAX_FORMAT) as tf:
    add(tf, "e/", tarfile.DIRTYPE, mode=0o000)
    add(tf, "e/f", data=b"UNVOUCHED\n")
    add(tf, "h2", tarfile.LNKTYPE, link="t")
PY
zstd -q "$T/l1.tar" -o "$T/run/snapshots/0001.tar.zst"
zstd -q "$T/l2.tar" -o "$T/run/snapshots/0002.tar.zst"
(cd "$T/run" && sha256sum snapshots/0001.tar.zst && echo "$(printf '0%.0s' $(seq 64))  snapshots/0002.tar.zst") >"$T/run/SHA256SUMS"
chmod -R a+rX "$T/run"
[ ${#as[@]} -eq 0 ] || chown 65534:65534 "$T" "$T/out0"

"${as[@]}" "$NS" restore "$T/run" --step 2 --to "$T/out" 2>"$T/e1"; rc=$?
expect_rc "a refused chain" 4 "$rc"
expect_grep "the digest refuses layer 0002" "0002.*digest mismatch" "$T/e1"
check "the target it made is gone" test ! -e "$T/out"
echo keep >"$T/out0/old"
[ ${#as[@]} -eq 0 ] || chown 65534:65534 "$T/out0/old"
"${as[@]}" "$NS" restore "$T/run" --step 2 --to "$T/out0" --force 2>"$T/e2"; rc=$?
expect_rc "a refused chain into a folder (--force)" 4 "$rc"
check "the folder given is left empty" sh -c "[ -d '$T/out0' ] && [ -z \"\$(ls -A '$T/out0')\" ]"
# 1,400 folders deep, its digest wrong, under a limit of 256 open files
mkdir -p "$T/deep/snapshots"
python3 - "$T" <<'PY'
import io, sys, tarfile
t = sys.argv[1]
with tarfile.open(t + "/deep.tar", "w", format=tarfile.PAX_FORMAT) as tf:
    name = ""
    for _ in range(1400):
        name += "a/"
        i = tarfile.TarInfo(name); i.type = tarfile.DIRTYPE; i.mode = 0o755; i.mtime = 1700000000
        tf.addfile(i)
    i = tarfile.TarInfo(name + "f"); i.size = 5; i.mode = 0o644; i.mtime = 1700000000
    tf.addfile(i, io.BytesIO(b"DEEP\n"))
PY
zstd -q "$T/deep.tar" -o "$T/deep/snapshots/0001.tar.zst"
echo "$(printf '0%.0s' $(seq 64))  snapshots/0001.tar.zst" >"$T/deep/SHA256SUMS"
chmod -R a+rX "$T/deep"
(ulimit -n 256 && exec "${as[@]}" "$NS" restore "$T/deep" --step 1 --to "$T/outdeep") 2>"$T/e4"; rc=$?
expect_rc "a refused layer 1,400 folders deep" 4 "$rc"
check "the deep target is gone (ulimit -n 256)" test ! -e "$T/outdeep"
[ "$rc" = 4 ] || head -c 600 "$T/e4"

# the same chain with its digests right restores, as the same user
(cd "$T/run" && sha256sum snapshots/0001.tar.zst snapshots/0002.tar.zst) >"$T/run/SHA256SUMS"
"${as[@]}" "$NS" restore "$T/run" --step 2 --to "$T/good" 2>"$T/e3"; rc=$?
expect_rc "the chain with its digests right" 0 "$rc"; [ "$rc" = 0 ] || cat "$T/e3"
check "its folder is there" test -d "$T/good/e"
chmod -R u+rwx "$T/good" 2>/dev/null
[ ${#as[@]} -eq 0 ] || "${as[@]}" chmod -R u+rwx "$T/good" 2>/dev/null
done_tests
