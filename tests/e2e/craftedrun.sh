#!/usr/bin/env bash
# craftedrun: restore of hostile layers and audit of hostile run archives, written as the attacker.
# A layer may hold anything a tar can say; restore must change nothing outside its target (issue
# 17, item 3: a/, a/b 0777, a whiteout of a, then a -> VICTIM made libarchive's deferred fix-up
# chmod VICTIM/b). A RUN.tar.zst may expand to anything; unpacking it is bounded (item 8).
source "$(dirname "$0")/lib.sh"
CRAFT=$ROOT/tests/e2e/craft.py
if ! command -v python3 >/dev/null || ! command -v zstd >/dev/null; then
	skip "crafted runs" "python3 and zstd are needed to craft layers"
	done_tests
	exit
fi

# victim: a folder outside every target, whose modes and times must not move.
# Made anew before each attack, so that each is judged alone.
V=$T/victim
victim() {
	rm -rf "$V" && mkdir -p "$V/b" && chmod 0700 "$V" "$V/b" && echo secret >"$V/file" && chmod 0600 "$V/file"
	touch -d @1000000000 "$V/b" "$V/file" "$V"
}
state() { stat -c '%n %a %Y %s %h' "$V" "$V/b" "$V/file"; ls -A "$V"; cat "$V/file"; }
victim
want=$(state)

# runwith NAME: a run directory $T/NAME whose first layer is the spec on stdin.
runwith() {
	mkdir -p "$T/$1/snapshots"
	python3 "$CRAFT" | zstd -qc >"$T/$1/snapshots/0001.tar.zst"
	(cd "$T/$1" && sha256sum snapshots/0001.tar.zst >SHA256SUMS)
}

# attack NAME PATTERN: restore $T/NAME's layer; it must fail (exit 4) saying PATTERN, and the
# victim must be as it was.
attack() {
	victim
	"$NS" restore "$T/$1" --step 1 --to "$T/out.$1" 2>"$T/$1.err"
	expect_rc "$1: restore refuses the layer" 4 $?
	expect_grep "$1: says why" "$2" "$T/$1.err"
	expect_eq "$1: nothing outside the target changed" "$want" "$(state)"
}

# The issue's layer: a/, a/b 0777, a whiteout of a, then the symlink a -> VICTIM.
runwith issue <<SPEC
d a 0755 1234567890
d a/b 0777 1234567890
w .wh.a
l a $V
SPEC
attack issue 'whiteout \.wh\.a removes a, which the same layer already wrote into'

# The same with an opaque whiteout of the folder above, and a deeper replaced folder.
runwith opaque <<SPEC
d a 0755
d a/b 0777
o a/.wh..wh..opq
l a/b $V
SPEC
attack opaque 'whiteout a/\.wh\.\.wh\.\.opq removes a'

# No whiteout at all: a folder the layer made, replaced by a symlink.
runwith replace <<SPEC
d a 0755
d a/b 0777 1234567890
l a/b $V
SPEC
attack replace 'a/b replaces a directory that the same layer already wrote into'

# A symlink, then a file and a folder through it.
runwith through <<SPEC
l l $V
f l/file 0644 pwned
SPEC
attack through 'l/file: l is not a directory inside the target'
runwith throughdir <<SPEC
l l $V
d l/b 0777
SPEC
attack throughdir 'l/b/?: l is not a directory inside the target'

# Hard links to outside: by "..", by an absolute name, and through a symlink of the layer; then
# data written through the name.
runwith hardout <<SPEC
h h ../../victim/file
f h 0644 pwned
SPEC
attack hardout 'hard link to \.\./\.\./victim/file, outside the target'
runwith hardabs <<SPEC
h h $V/file
f h 0644 pwned
SPEC
attack hardabs "hard link to $V/file, outside the target"
runwith hardlink <<SPEC
l l $V
h h l/file
f h 0644 pwned
SPEC
attack hardlink 'hard link to l/file, which is not a file inside the target'

# Names that leave the target.
runwith dotdot <<SPEC
f ../../victim/file 0644 pwned
SPEC
attack dotdot "entry \.\./\.\./victim/file: absolute, with '\.\.'"
runwith dotdot2 <<SPEC
d a 0755
f a/../../victim/file 0644 pwned
SPEC
attack dotdot2 "entry a/\.\./\.\./victim/file: absolute, with '\.\.'"
runwith absolute <<SPEC
f $V/file 0644 pwned
SPEC
attack absolute "entry $V/file: absolute, with '\.\.'"

# A device node.
runwith device <<SPEC
c null
SPEC
attack device 'null: not a file, directory or symlink'

# replay restores the first layer the same way: a real run whose first layer is the issue's.
cp -r "$ROOT/examples/hello" "$T/hello"
rm -rf "$T/hello/runs" "$T/hello/workspace/reports"
hello=$("$NS" run "$T/hello/nightshift.yaml" --out "$T/hruns" 2>"$T/hello.err")
expect_rc "replay: the example runs" 0 $?
first=$(ls "$hello/snapshots/"*.tar.zst 2>/dev/null | head -n1)
if [ -n "$first" ]; then
	python3 "$CRAFT" <<SPEC | zstd -qc >"$first"
d a 0755 1234567890
d a/b 0777 1234567890
w .wh.a
l a $V
SPEC
	(cd "$hello" && grep -v " snapshots/${first##*/}\$" SHA256SUMS >S && sha256sum "snapshots/${first##*/}" >>S && mv S SHA256SUMS)
	victim
	"$NS" replay "$hello" --out "$T/rruns" >/dev/null 2>"$T/replay.err"
	rc=$?
	check "replay: refuses the layer (exit $rc)" test "$rc" != 0
	expect_grep "replay: says why" 'whiteout \.wh\.a removes a, which the same layer already wrote into' "$T/replay.err"
	expect_eq "replay: nothing outside the target changed" "$want" "$(state)"
else
	echo "FAIL replay: the example run has no layer"; _fail=$((_fail + 1))
fi

# Set-id bits: the file is restored, without them.
runwith setid <<SPEC
f tool 6755 #!/bin/sh
d dir 2775
SPEC
"$NS" restore "$T/setid" --step 1 --to "$T/out.setid" 2>"$T/setid.err"
expect_rc "setid: restored" 0 $?
expect_eq "setid: set-uid and set-gid dropped" "755 775" "$(stat -c %a "$T/out.setid/tool" "$T/out.setid/dir" 2>&1 | tr '\n' ' ' | sed 's/ $//')"

# Entries in any order, folders made by the layer itself: fine when nothing is replaced.
runwith fine <<SPEC
f x/y/z 0600 deep
d x 0750 1234567890
l x/link ../elsewhere
SPEC
"$NS" restore "$T/fine" --step 1 --to "$T/out.fine" 2>"$T/fine.err"
expect_rc "fine: an odd but harmless layer restores" 0 $?
expect_eq "fine: what it holds" "x 750 1234567890|x/link|deep" \
	"$(cd "$T/out.fine" && stat -c '%n %a %Y' x)|$(cd "$T/out.fine" && find x -type l)|$(cat "$T/out.fine/x/y/z")"

# --- Run directories: a chain of layers expands within --max-unpack (restore, replay, diff, report).
# A layer someone else made may say anything about sizes; each entry counts from its header before
# anything of it is written, so files are capped at 1 MiB here (ulimit -f): a bound checked only
# after writing would be killed by SIGXFSZ. A refused restore leaves nothing in its target.
ms() { date +%s%N | cut -c1-13; }
# layer NAME ZSTD-LEVEL: the run directory $T/NAME whose only layer is the tar on stdin.
layer() {
	mkdir -p "$T/$1/snapshots"
	zstd -qc "-$2" >"$T/$1/snapshots/0001.tar.zst"
	(cd "$T/$1" && sha256sum snapshots/0001.tar.zst >SHA256SUMS)
}
# refused NAME PATTERN [FLAGS...]: restore --step 1 of $T/NAME exits 4 saying PATTERN, leaves no
# target, and prints how long it took (information, not a check).
refused() {
	local name=$1 pat=$2 t0 t1
	shift 2
	t0=$(ms)
	(ulimit -f 1024; exec "$NS" restore "$T/$name" --step 1 --to "$T/out.$name" "$@") 2>"$T/$name.err"
	local rc=$?
	t1=$(ms)
	expect_rc "$name: restore refuses the layer" 4 "$rc"
	expect_grep "$name: names the layer and the bound" "layer snapshots/0001\.tar\.zst: $pat" "$T/$name.err"
	check "$name: nothing left behind (no $T/out.$name)" test ! -e "$T/out.$name"
	echo "note: $name: a layer of $(stat -c %s "$T/$name/snapshots/0001.tar.zst") bytes refused in $((t1 - t0)) ms"
}
# A zstd bomb: 33 KB of layer holding a file of 1 GiB of zeros.
python3 "$CRAFT" <<<"z big 1073741824" | layer lgib 19
refused lgib 'big: 1073741824 bytes would take the restored workspace past 67108864 bytes; refusing it \(--max-unpack raises the bound\)'
# A header that says 100 GiB, and nothing after it.
printf 'f a 0644 first\nZ huge 107374182400\n' | python3 "$CRAFT" | layer l100g 3
refused l100g 'huge: 107374182400 bytes would take the restored workspace past 67108864 bytes'
# Files each under the bound, together over it: the chain counts them all.
for i in $(seq 1 80); do echo "z f$i 1000000"; done | python3 "$CRAFT" | layer lmany 19
refused lmany 'f(6[7-9]|7[0-9]): 1000000 bytes would take the restored workspace past 67108864 bytes'
# A million and one empty files (a tar of 512 MB, written here header by header): past what a
# restore writes (100 000 entries at least) and what diff and report read (1 000 000 at least).
python3 - <<'PY' | layer lmillion 1
import sys, tarfile
ti = tarfile.TarInfo("f0000000")
ti.mtime, ti.mode = 1700000000, 0o644
head = bytearray(ti.tobuf(tarfile.USTAR_FORMAT))
head[148:156] = b" " * 8
base = sum(head) - sum(b"f0000000")
out = sys.stdout.buffer
chunk = []
for i in range(1000001):
    name = b"f%07d" % i
    h = head[:]
    h[0:8] = name
    h[148:156] = b"%06o\0 " % (base + sum(name))
    chunk.append(bytes(h))
    if len(chunk) == 10000:
        out.write(b"".join(chunk))
        chunk = []
out.write(b"".join(chunk) + bytes(1024))
PY
check "lmillion: the layer lists a million and one entries" bash -c "[ \"\$(tar --zstd -tf '$T/lmillion/snapshots/0001.tar.zst' | wc -l)\" = 1000001 ]"
refused lmillion 'f0100000: more than 100000 entries in the restored workspace; refusing it'
# A sparse file whose size is a petabyte (512 bytes of data): the data is small, the size is not.
python3 "$CRAFT" <<<"s big 1125899906842624" | layer lsparse 3
refused lsparse 'big: a file of 1125899906842624 bytes \(holes included\) would take the restored workspace past 68719476736 bytes of file sizes'
# Bytes after the tar's end, which no entry writes: the restore reads them for the digest.
{ python3 "$CRAFT" <<<"f a 0644 hi"; head -c 1073741824 /dev/zero; } | layer ltail 19
refused ltail 'it decompresses to more than [0-9]+ bytes'
# A target that was there and empty stays, empty.
mkdir "$T/out.keep"
(ulimit -f 1024; exec "$NS" restore "$T/lgib" --step 1 --to "$T/out.keep") 2>"$T/keep.err"
expect_rc "keep: refused" 4 $?
expect_eq "keep: the target given is there, empty" "yes:" "$(test -d "$T/out.keep" && echo yes):$(ls -A "$T/out.keep")"

# What the bound lets through restores: a sparse file of 2 GiB (its 512 bytes of data written; no
# ulimit -f, which caps a file's size, holes included), and with --max-unpack a file past the
# default, which it then refuses once lowered.
printf 'f a 0644 hi\ns big 2147483648\n' | python3 "$CRAFT" | layer lsparse2g 3
"$NS" restore "$T/lsparse2g" --step 1 --to "$T/out.lsparse2g" 2>"$T/lsparse2g.err"
expect_rc "lsparse2g: a 2 GiB sparse file restores" 0 $?
expect_eq "lsparse2g: its size and its data" "2147483648 512" \
	"$(stat -c %s "$T/out.lsparse2g/big" 2>&1) $(tr -d '\0' <"$T/out.lsparse2g/big" 2>/dev/null | wc -c)"
check "lsparse2g: holes stay holes" test "$(stat -c %b "$T/out.lsparse2g/big")" -lt 1024
python3 "$CRAFT" <<<"z big 104857600" | layer l100m 19
refused l100m 'big: 104857600 bytes would take the restored workspace past 67108864 bytes'
"$NS" restore "$T/l100m" --step 1 --to "$T/out.l100m" --max-unpack 200M 2>"$T/l100m.ok"
expect_rc "l100m: --max-unpack 200M restores it" 0 $?
expect_eq "l100m: all of it" 104857600 "$(stat -c %s "$T/out.l100m/big" 2>&1)"
rm -rf "${T:?}/out.l100m"
refused l100m 'big: 104857600 bytes would take the restored workspace past 1000000 bytes' --max-unpack 1000000

# replay of a real run whose first layer is the bomb: refused, and no workspace left in --out.
hello2=$("$NS" run "$T/hello/nightshift.yaml" --out "$T/hruns2" 2>"$T/hello2.err")
expect_rc "replay bomb: the example runs" 0 $?
first=$(ls "$hello2/snapshots/"*.tar.zst 2>/dev/null | head -n1)
if [ -n "$first" ]; then
	python3 "$CRAFT" <<<"z big 1073741824" | zstd -qc -19 >"$first"
	(cd "$hello2" && grep -v " snapshots/${first##*/}\$" SHA256SUMS >S && sha256sum "snapshots/${first##*/}" >>S && mv S SHA256SUMS)
	mkdir -p "$T/rbomb"
	(ulimit -f 1024; exec "$NS" replay "$hello2" --out "$T/rbomb") >/dev/null 2>"$T/rbomb.err"
	expect_rc "replay bomb: refused" 4 $?
	expect_grep "replay bomb: names the layer and the bound" "layer snapshots/${first##*/}: big: 1073741824 bytes would take the restored workspace past 67108864 bytes" "$T/rbomb.err"
	expect_eq "replay bomb: no workspace left in --out" "" "$(ls -A "$T/rbomb" | grep replay-workspace)"

	# diff and report read the same layers within the same bound.
	"$NS" diff "$hello2" --step 1 >/dev/null 2>"$T/diff.err"
	expect_rc "diff: refuses the bomb" 4 $?
	expect_grep "diff: names the layer and the bound" "layer .*snapshots/${first##*/}: big: 1073741824 bytes would take the layers read past 67108864 bytes" "$T/diff.err"
	"$NS" report "$hello2" --out "$T/bomb.html" >/dev/null 2>"$T/report.err"
	expect_rc "report: still writes the page" 0 $?
	expect_grep "report: warns that the changes are not shown, and why" 'WARNING: the page shows no workspace changes: .*big: 1073741824 bytes would take the layers read past 67108864' "$T/report.err"
	expect_grep "report: the page says why" 'The snapshot layers cannot be read: .*1073741824 bytes would take' "$T/bomb.html"
	cp "$T/lmillion/snapshots/0001.tar.zst" "$first"
	(cd "$hello2" && grep -v " snapshots/${first##*/}\$" SHA256SUMS >S && sha256sum "snapshots/${first##*/}" >>S && mv S SHA256SUMS)
	t0=$(ms)
	"$NS" diff "$hello2" --step 1 >/dev/null 2>"$T/diffm.err"
	expect_rc "diff: refuses a million entries" 4 $?
	echo "note: diff of the million-entry layer refused in $(($(ms) - t0)) ms"
	expect_grep "diff: names the entry bound" 'f1000000: more than 1000000 entries in the layers read' "$T/diffm.err"
else
	echo "FAIL replay bomb: the example run has no layer"; _fail=$((_fail + 1))
fi

# --- Run archives: bounded unpacking (audit, replay, restore, report, diff, export share it). ---
mkdir -p "$T/tmp"
# bomb NAME SPEC...: a run archive whose run/ holds the spec's entries, then an empty SHA256SUMS
# (each bound must hold before SHA256SUMS can say anything).
bomb() {
	local name=$1
	shift
	{ echo "d run 0755"; printf '%s\n' "$@"; echo "f run/SHA256SUMS 0644"; } | python3 "$CRAFT" | zstd -qc -19 >"$T/$name.tar.zst"
}
# unpack NAME WANT-RC PATTERN [FLAGS...]: audit the archive with TMPDIR=$T/tmp and files capped at
# 1 MiB (ulimit -f): a bound checked only after writing would be killed by SIGXFSZ.
unpack() {
	local name=$1 rc=$2 pat=$3
	shift 3
	(ulimit -f 1024; TMPDIR=$T/tmp exec "$NS" audit "$T/$name.tar.zst" "$@") >/dev/null 2>"$T/$name.err"
	expect_rc "$name: audit exit" "$rc" $?
	expect_grep "$name: says why" "$pat" "$T/$name.err"
	expect_eq "$name: nothing left in TMPDIR" "" "$(ls -A "$T/tmp")"
	rm -rf "${T:?}/tmp" && mkdir "$T/tmp"
}
bomb gib "z run/events.jsonl 1073741824"
size=$(stat -c %s "$T/gib.tar.zst")
check "gib: the archive is small (${size} bytes) and expands to 1 GiB" test "$size" -lt 100000
unpack gib 2 'run/events\.jsonl: 1073741824 bytes would take the unpacked run past 67108864 bytes'
# Many entries each under the bound, together over it: refused when the total passes it.
specs=()
for i in $(seq 1 80); do specs+=("z run/f$i 1000000"); done
bomb many "${specs[@]}"
unpack many 2 'run/f(6[7-9]|7[0-9]): 1000000 bytes would take the unpacked run past 67108864 bytes'
# --max-unpack lowers (or raises) the bound, and a bad value is a usage error.
bomb small "z run/a 300000" "z run/b 300000"
unpack small 2 'run/b: 300000 bytes would take the unpacked run past 500000 bytes' --max-unpack 500000
unpack small 2 '--max-unpack lots: want a size' --max-unpack lots
# Links and devices in a run archive, and names that leave.
bomb link "l run/snapshots /etc"
unpack link 2 'run/snapshots: a symlink, which no run directory holds'
bomb hard "f run/x 0644 x" "h run/y run/x"
unpack hard 2 'run/y: a hard link, which no run directory holds'
bomb dev "c run/null"
unpack dev 2 'run/null: not a file or directory'
bomb dots "f ../escape 0644 x"
unpack dots 2 "entry \.\./escape: absolute, with '\.\.'"
check "no file escaped the unpacking" test ! -e "$T/escape"
# Many empty entries: the entry bound.
python3 - "$T/entries.spec" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("d run 0755\n")
    for i in range(100001):
        f.write("f run/e%d 0644\n" % i)
    f.write("f run/SHA256SUMS 0644\n")
PY
python3 "$CRAFT" <"$T/entries.spec" | zstd -qc >"$T/entries.tar.zst"
unpack entries 2 'run/e99999: more than 100000 entries in the unpacked run; refusing it'
# A pax header of 64 MiB (libarchive would hold it in memory): refused by libarchive's own bound.
python3 - "$T/pax.tar" <<'PY'
import sys, tarfile
t = tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT)
ti = tarfile.TarInfo("run/x")
ti.pax_headers = {"comment": "a" * (64 << 20)}
t.addfile(ti, None)
t.close()
PY
zstd -q --rm "$T/pax.tar" -o "$T/pax.tar.zst"
unpack pax 2 'Special header too large'

# Files are checked against SHA256SUMS as they arrive (or, before it, when it arrives): a file it
# does not list, one whose bytes differ, one outside the run's folder.
sumof() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
good=$(sumof good)
bomb unlisted "f run/a 0644 good" "f run/extra 0644 smuggled"
python3 "$CRAFT" >"$T/u.tar" <<SPEC
d run 0755
f run/SHA256SUMS 0644 $good  a
f run/a 0644 good
f run/extra 0644 smuggled
SPEC
zstd -qc "$T/u.tar" >"$T/unlisted.tar.zst"
unpack unlisted 4 'run/extra: not listed in SHA256SUMS'
python3 "$CRAFT" <<SPEC | zstd -qc >"$T/changed.tar.zst"
d run 0755
f run/a 0644 bad!
f run/SHA256SUMS 0644 $good  a
SPEC
unpack changed 4 "run/a: its digest is [0-9a-f]{16}\.\.\., SHA256SUMS says ${good:0:16}"
python3 "$CRAFT" <<SPEC | zstd -qc >"$T/outside.tar.zst"
d run 0755
f run/SHA256SUMS 0644 $good  a
f run/a 0644 good
f other 0644 x
SPEC
unpack outside 4 'other: outside the run folder run/ that SHA256SUMS lies in'
python3 "$CRAFT" <<SPEC | zstd -qc >"$T/agrees.tar.zst"
d run 0755
f run/a 0644 good
f run/SHA256SUMS 0644 $good  a
f run/SHA256SUMS.sig 0644 unlisted, as it must be
SPEC
TMPDIR=$T/tmp "$NS" audit "$T/agrees.tar.zst" >"$T/agrees.out" 2>"$T/agrees.err"
expect_rc "agrees: a run archive that agrees with its SHA256SUMS unpacks" 0 $?
expect_grep "agrees: audit reads it" '0 tool calls' "$T/agrees.out"
expect_eq "agrees: nothing left in TMPDIR" "" "$(ls -A "$T/tmp")"
# A file SHA256SUMS lists that the archive lacks: refused once the archive ends, as a changed
# one is, and named as `audit --verify` names it in the run unpacked by tar.
other=$(sumof other)
printf '%s  a\n%s  jobs/j/output.json\n' "$good" "$other" | python3 -c '
import sys, tarfile, io
sums = sys.stdin.buffer.read()
t = tarfile.open(fileobj=sys.stdout.buffer, mode="w|", format=tarfile.PAX_FORMAT)
for name, data in (("run/a", b"good"), ("run/SHA256SUMS", sums)):
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    t.addfile(ti, io.BytesIO(data))
t.close()' | zstd -qc >"$T/lacks.tar.zst"
unpack lacks 4 'run/jobs/j/output\.json: listed in SHA256SUMS but missing from the archive'
expect_grep "lacks: said as a disagreement with SHA256SUMS" 'not unpacked, it disagrees with its own SHA256SUMS' "$T/lacks.err"
mkdir -p "$T/lacks.dir" && tar --zstd -xf "$T/lacks.tar.zst" -C "$T/lacks.dir"
"$NS" audit "$T/lacks.dir/run" --verify >/dev/null 2>"$T/lacks.verify"
expect_rc "lacks: audit --verify of the same run unpacked by tar fails too" 4 $?
expect_grep "lacks: and names the same file" 'jobs/j/output\.json: listed in SHA256SUMS but missing' "$T/lacks.verify"

# Each command that takes a RUN refuses the bomb the same way, and takes --max-unpack.
for cmd in "restore --step end --to $T/o.bomb" "replay --out $T/o.replay" "report --out $T/o.html" "diff --step 1" \
	"export --otlp $T/o.otlp"; do
	(ulimit -f 1024; TMPDIR=$T/tmp exec "$NS" ${cmd%% *} "$T/gib.tar.zst" ${cmd#* } --max-unpack 64M) >/dev/null 2>"$T/cmd.err"
	expect_rc "${cmd%% *}: refuses the bomb" 2 $?
	expect_grep "${cmd%% *}: says why" '1073741824 bytes would take the unpacked run past 67108864 bytes' "$T/cmd.err"
	expect_eq "${cmd%% *}: nothing left in TMPDIR" "" "$(ls -A "$T/tmp")"
	rm -rf "${T:?}/tmp" && mkdir "$T/tmp"
done
done_tests
