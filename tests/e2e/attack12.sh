#!/usr/bin/env bash
# attack12: a run directory or archive handed to `nightshift restore` is hostile.
# 1. The default bound of a chain is 100 times its compressed size, and that size was st_size. A
#    layer padded with a zstd skippable frame of 1 GiB of holes (a sparse file: 4 KB on disk)
#    still decodes and matches its SHA256SUMS line, and raised the bound to 100 GiB; the newer
#    layers are applied first, so one of them wrote a 200 MB file through the 64 MiB default (and
#    the restore succeeded). The same padding at the end of a RUN.tar.zst let its unpacking write
#    as much. Now the bytes a file brings to a bound are those on disk (its blocks, at most its size).
#    And a layer holding a skippable frame is refused (nightshift writes none): a layer of 16 GiB
#    of holes in four of them, its digest wrong, was read to its end before the digest refused it.
# 2. Held (regression checks of commit 60ed3fb): SHA256SUMS indexed sorted, the first line for a
#    name still wins (in either order, with "./", upper-case hex, a thousand bad lines first); a
#    layer of a 128 MiB window (a decoder not kept as the spare) followed by ordinary ones; a
#    layer that is a symlink to a large file or a fifo is refused before any is read.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
needuserns attack12
if ! command -v zstd >/dev/null || ! command -v python3 >/dev/null || ! command -v truncate >/dev/null; then
	skip attack12 "zstd, python3 and truncate are needed"; done_tests; exit
fi
mkdir -p "$T/ws" && echo base >"$T/ws/f.txt"
cat >"$T/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  s: { provider: scripted, replies: [
    {tool_calls: [ {name: shell, arguments: {command: "echo one > one.txt"}} ]},
    {tool_calls: [ {name: shell, arguments: {command: "echo two > two.txt"}} ]},
    {tool_calls: [ {name: shell, arguments: {command: "echo three > three.txt"}} ]},
    {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: s, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the night" 0 "$rc"; [ "$rc" = 0 ] || cat "$T/err"

# bomb SIZE: a tar (one file big.bin of SIZE bytes of "x") on stdout, zstd-compressed: ~3 KB a 100 MB.
bomb() {
	python3 - "$1" <<'PY' | zstd -qc
import io, sys, tarfile
class X(io.RawIOBase):
    def __init__(s, n): s.left = n
    def readable(s): return True
    def readinto(s, b):
        k = min(len(b), s.left); b[:k] = b"x" * k; s.left -= k; return k
t = tarfile.open(fileobj=sys.stdout.buffer, mode="w|", format=tarfile.PAX_FORMAT)
ti = tarfile.TarInfo("big.bin"); ti.size = int(sys.argv[1]); ti.mtime = 1700000000
t.addfile(ti, io.BufferedReader(X(ti.size))); t.close()
PY
}
# pad FILE: a zstd skippable frame of 1 GiB of holes after FILE's bytes (it still decodes the same).
pad() {
	python3 - "$1" <<'PY'
import struct, sys
f = open(sys.argv[1], "r+b"); f.seek(0, 2)
n = (1 << 30) - 8
f.write(struct.pack("<II", 0x184D2A50, n)); f.truncate(f.tell() + n)
PY
}
big=$((200 << 20))
# capped CMD...: CMD with what a bypass would write held under 400 MiB.
capped() { (ulimit -f $((400 << 10)) && "$@"); }

# 1a. A run directory: 0001 a sparse file of 2 GiB of holes (no zstd at all: it is read last, after
#     the bomb), 0002 the bomb.
r=$T/holes && cp -r "$dir" "$r"
rm "$r/snapshots/0001.tar.zst" && truncate -s 2G "$r/snapshots/0001.tar.zst"
bomb $big >"$r/snapshots/0002.tar.zst"
relist "$r" snapshots/0001.tar.zst snapshots/0002.tar.zst
capped "$NS" restore "$r" --step 2 --to "$T/o0" 2>"$T/e0"; rc=$?
expect_rc "restore: a layer of holes does not raise the bound (exit 4)" 4 "$rc"
expect_grep "restore: the bomb is refused by the bound" "big.bin: $big bytes would take the restored workspace past 67108864 bytes" "$T/e0"
check "restore: nothing is left" test ! -e "$T/o0"
# The same with 0001 a real layer padded by a skippable frame of 1 GiB of holes (it decodes the same).
r=$T/sparse && cp -r "$dir" "$r"
pad "$r/snapshots/0001.tar.zst"
bomb $big >"$r/snapshots/0002.tar.zst"
relist "$r" snapshots/0001.tar.zst snapshots/0002.tar.zst
expect_eq "the padded layer still decodes to its tar" "$(zstd -dc "$dir/snapshots/0001.tar.zst" | sha256sum)" \
	"$(zstd -dc "$r/snapshots/0001.tar.zst" | sha256sum)"
capped "$NS" restore "$r" --step 2 --to "$T/o1" 2>"$T/e1"; rc=$?
expect_rc "restore: a sparse padded layer does not raise the bound (exit 4)" 4 "$rc"
expect_grep "restore: it says which bound" "big.bin: $big bytes would take the restored workspace past 67108864 bytes" "$T/e1"
check "restore: nothing is left in the target" test ! -e "$T/o1/big.bin"
# With a bound that lets the bomb through, the padded layer itself is refused: nightshift writes
# no skippable frame.
capped "$NS" restore "$r" --step 2 --to "$T/o1b" --max-unpack 300M 2>"$T/e1b"; rc=$?
expect_rc "restore --max-unpack 300M: a layer with a skippable frame is refused (exit 4)" 4 "$rc"
expect_grep "restore --max-unpack 300M: it says where" "0001.tar.zst: corrupt zstd data: a skippable frame at byte" "$T/e1b"
check "restore --max-unpack 300M: nothing is left" test ! -e "$T/o1b"
# diff reads layers through its own reader, to the tar's end: a skippable frame of 1 GiB of holes
# before the tar was read through; now refused the same.
r=$T/front && cp -r "$dir" "$r"
python3 - "$dir/snapshots/0002.tar.zst" "$r/snapshots/0002.tar.zst" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
f = open(sys.argv[2], "wb")
n = (1 << 30) - 8
f.write(struct.pack("<II", 0x184D2A50, n)); f.seek(8 + n); f.write(data)
PY
relist "$r" snapshots/0002.tar.zst
"$NS" diff "$r" --step 2 >/dev/null 2>"$T/e1c"; rc=$?
expect_rc "diff --step: a layer starting with a skippable frame is refused (exit 4)" 4 "$rc"
expect_grep "diff --step: it says where" "0002.tar.zst: corrupt zstd data: a skippable frame at byte 0" "$T/e1c"
"$NS" restore "$r" --step 3 --to "$T/o1c" 2>"$T/e1d"; rc=$?
expect_rc "restore: the same layer is refused (exit 4)" 4 "$rc"
expect_grep "restore: it says where" "0002.tar.zst: corrupt zstd data: a skippable frame at byte 0" "$T/e1d"

# 1d. A layer of 16 GiB of holes in four skippable frames (16 KB on disk), its digest wrong: it was
#     read to its end before the digest refused it (71 s here); now refused at the first frame.
r=$T/slow && cp -r "$dir" "$r"
python3 - "$r/snapshots/0003.tar.zst" <<'PY'
import struct, sys
f = open(sys.argv[1], "r+b"); f.seek(0, 2)
n = (1 << 32) - 1
for i in range(4):
    p = f.tell(); f.write(struct.pack("<II", 0x184D2A50, n)); f.seek(p + 8 + n)
f.truncate(f.tell())
PY
start=$(date +%s)
timeout 60 "$NS" restore "$r" --step 3 --to "$T/o5" 2>"$T/e5"; rc=$?
expect_rc "restore: 16 GiB of skippable holes refused (exit 4, not a minute's read)" 4 "$rc"
expect_grep "restore: it says where" "0003.tar.zst: corrupt zstd data: a skippable frame at byte" "$T/e5"
check "restore: within 10 s" test $(($(date +%s) - start)) -le 10
# 1e. A skippable frame whose magic straddles the reader's 128 KiB buffer (the frame before it ends
#     2 bytes short of it) is seen too; the same frames without it restore.
head -c 300000 /dev/urandom >"$T/rnd"
python3 - "$T/rnd" "$T/straddle" <<'PY'
import io, struct, subprocess, sys, tarfile
data = open(sys.argv[1], "rb").read()
b = io.BytesIO(); t = tarfile.open(fileobj=b, mode="w", format=tarfile.PAX_FORMAT)
ti = tarfile.TarInfo("x.bin"); ti.size = len(data); ti.mtime = 1700000000; t.addfile(ti, io.BytesIO(data)); t.close()
T = b.getvalue()
z = lambda d: subprocess.run(["zstd", "-q", "-1", "-c"], input=d, capture_output=True, check=True).stdout
target = 131075 - 2  # ZSTD_DStreamInSize() - 2
k = target - 20
for _ in range(50):
    f1 = z(T[:k])
    if len(f1) == target:
        break
    k += target - len(f1)
assert len(f1) == target
open(sys.argv[2] + ".bad", "wb").write(f1 + struct.pack("<II", 0x184D2A50, 16) + bytes(16) + z(T[k:]))
open(sys.argv[2] + ".ok", "wb").write(f1 + z(T[k:]))
PY
for v in bad ok; do
	r=$T/straddle$v && cp -r "$dir" "$r" && cp "$T/straddle.$v" "$r/snapshots/0003.tar.zst"
	relist "$r" snapshots/0003.tar.zst
	"$NS" restore "$r" --step 3 --to "$T/o6$v" 2>"$T/e6$v"; rc=$?
	expect_rc "restore: frames of 131073 bytes then $v" "$([ $v = ok ] && echo 0 || echo 4)" "$rc"
done
expect_grep "restore: the straddling magic is seen" "a skippable frame at byte 131073" "$T/e6bad"
check "restore: the frames without it give the file" cmp -s "$T/rnd" "$T/o6ok/x.bin"

# 1b. A run archive: the bomb as a file of the run, the archive padded the same way.
r=$T/arun && cp -r "$dir" "$r"
bomb $big | zstd -dc >"$r/jobs/j/big.tar"
relist "$r" jobs/j/big.tar
(cd "$T" && tar -cf - arun | zstd -qc >"$T/arun.tar.zst")
pad "$T/arun.tar.zst"
capped "$NS" restore "$T/arun.tar.zst" --step 1 --to "$T/o2" 2>"$T/e2"; rc=$?
expect_rc "restore RUN.tar.zst: a sparse archive does not raise its unpacking bound (exit 2)" 2 "$rc"
expect_grep "restore RUN.tar.zst: it says which bound" "past 67108864 bytes" "$T/e2"
check "restore RUN.tar.zst: nothing restored" test ! -e "$T/o2"

# 1c. A layer that is a symlink to a large file, or a fifo: refused before any layer is read.
r=$T/link && cp -r "$dir" "$r"
truncate -s 1G "$T/huge" && mv "$r/snapshots/0001.tar.zst" "$T/l1" && ln -s "$T/huge" "$r/snapshots/0001.tar.zst"
bomb $big >"$r/snapshots/0002.tar.zst"
relist "$r" snapshots/0002.tar.zst
capped "$NS" restore "$r" --step 2 --to "$T/o3" 2>"$T/e3"; rc=$?
expect_rc "restore: a symlinked layer is refused before anything is read (exit 4)" 4 "$rc"
expect_grep "restore: it says why" "snapshots/0001.tar.zst: a symbolic link" "$T/e3"
rm -f "$r/snapshots/0001.tar.zst" && mkfifo "$r/snapshots/0001.tar.zst"
capped timeout 20 "$NS" restore "$r" --step 2 --to "$T/o4" 2>"$T/e4"; rc=$?
expect_rc "restore: a fifo layer is refused, not waited on (exit 4)" 4 "$rc"
expect_grep "restore: it says why" "snapshots/0001.tar.zst: a named pipe" "$T/e4"
rm -f "$T/huge"

# 2. SHA256SUMS: the first line for a name wins, whatever the index's order.
good=$(grep '  snapshots/0002.tar.zst$' "$dir/SHA256SUMS" | cut -c1-64)
bad=$(printf '%064d' 0)
nsums=0
sums() { # NAME WANT LINES...: a copy of the run whose 0002 lines are LINES; restore --step 3 exits WANT
	local name=$1 want=$2; shift 2
	nsums=$((nsums + 1))
	local r=$T/s$nsums && rm -rf "$r" "$T/os" && cp -r "$dir" "$r"
	grep -v 'snapshots/0002.tar.zst$' "$dir/SHA256SUMS" >"$r/SHA256SUMS"
	printf '%s\n' "$@" >>"$r/SHA256SUMS"
	"$NS" restore "$r" --step 3 --to "$T/os" >/dev/null 2>"$T/es"; local rc=$?
	expect_rc "SHA256SUMS $name" "$want" "$rc"
	[ "$rc" = "$want" ] || cat "$T/es"
}
sums "bad then good: the bad one" 4 "$bad  snapshots/0002.tar.zst" "$good  snapshots/0002.tar.zst"
sums "good then bad: the good one" 0 "$good  snapshots/0002.tar.zst" "$bad  snapshots/0002.tar.zst"
sums "./bad then good" 4 "$bad  ./snapshots/0002.tar.zst" "$good  snapshots/0002.tar.zst"
sums "bad then ./good" 4 "$bad  snapshots/0002.tar.zst" "$good  ./snapshots/0002.tar.zst"
sums "bad then GOOD" 4 "$bad *snapshots/0002.tar.zst" "$(echo "$good" | tr a-f A-F)  snapshots/0002.tar.zst"
sums "GOOD alone" 0 "$(echo "$good" | tr a-f A-F) *snapshots/0002.tar.zst"
sums "a name of another case" 4 "$good  Snapshots/0002.tar.zst"
sums "a name with CR" 4 "$good  snapshots/0002.tar.zst"$'\r'
sums "a name through .." 4 "$good  snapshots/../snapshots/0002.tar.zst"
mapfile -t many < <(for i in $(seq 1000); do echo "$bad  snapshots/0002.tar.zst"; done)
sums "1000 bad then good" 4 "${many[@]}" "$good  snapshots/0002.tar.zst"
sums "good then 1000 bad" 0 "$good  snapshots/0002.tar.zst" "${many[@]}"

# 2b. A layer of a 128 MiB window (its decoder too large to keep), then ordinary ones, restore the same tree.
r=$T/win && cp -r "$dir" "$r"
zstd -dc "$dir/snapshots/0003.tar.zst" | zstd -q --long=27 -19 -c >"$r/snapshots/0003.tar.zst"
relist "$r" snapshots/0003.tar.zst
"$NS" restore "$dir" --step end --to "$T/w0" 2>/dev/null
"$NS" restore "$r" --step end --to "$T/w1" 2>"$T/ew"; rc=$?
expect_rc "restore: a 128 MiB-window layer in the chain" 0 "$rc"
check "restore: the same tree as the run's own" diff -r "$T/w0" "$T/w1"
done_tests
