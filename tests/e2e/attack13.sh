#!/usr/bin/env bash
# attack13: an outside test of the patch's partial restores (commits 4e7ab24, ca7a3d8). Held: for
# hand-made change patterns patchpart's random nights do not make, every pair of steps patches
# byte for byte as whole restores do (scan and feed), and tampered layers are refused both ways.
. "$(dirname "$0")/lib.sh"
snapdrive_build
check "driver builds" test -x "$T/snapdrive"
[ -x "$T/snapdrive" ] || { cat "$T/cc.log"; done_tests; exit; }

# night NAME SETUP CMD...: the night's layers (scan and feed), every pair patched both ways.
night() {
	local name=$1 setup=$2 feed d a b n same pairs r1 r2; shift 2
	for feed in "" --feed; do
		d=$T/$name$feed; mkdir -p "$d/ws"
		(cd "$d/ws" && bash -c "$setup")
		"$T/snapdrive" steps "$d/ws" "$d/run" --level 1 $feed ${EXCLUDE:-} -- "$@" >"$d/log" 2>&1
		expect_rc "$name ${feed:-(scan)}: the night's layers" 0 $?
		n=$(($# + 1)) same=0 pairs=0
		for a in $(seq 1 $n); do for b in $(seq $((a + 1)) $n) end; do
			"$T/snapdrive" patch "$d/run" "$a" "$b" >"$d/p" 2>/dev/null; r1=$?
			"$T/snapdrive" patch "$d/run" "$a" "$b" --whole >"$d/w" 2>/dev/null; r2=$?
			pairs=$((pairs + 1))
			if [ $r1 = 0 ] && [ $r2 = 0 ] && cmp -s "$d/p" "$d/w"; then same=$((same + 1)); else echo "$name$feed $a $b: $r1/$r2"; diff "$d/w" "$d/p" | head; fi
		done; done
		expect_eq "$name ${feed:-(scan)}: every pair patches as whole restores do" "$pairs" "$same"
	done
}

night dirsym 'mkdir -p a/b d; echo x>a/b/f; echo y>a/g; echo q>d/f' 'rm -rf a; ln -s d a' 'echo w>>d/f' \
	'rm a; mkdir -p a/b; echo x>a/b/f; echo new>a/h'
night symdir 'mkdir d; echo q>d/f; ln -s d s' 'rm s; mkdir s; echo 1>s/f; echo 2>s/g' 'rm -rf s; ln -s d s'
night rename 'mkdir -p a/x; for i in 1 2 3; do echo $i>a/x/f$i; done' 'mv a b' 'mv b a; echo 4>a/x/f1' 'mv a/x a/y'
night sorting 'mkdir a; echo 1>a/b; echo 2>a-b; echo 3>a.b; echo 4>a0; echo 5>a/c' 'rm -rf a; echo file>a' \
	'rm a; mkdir a; echo 6>a/b' 'echo 7>>a-b; echo 8>>a0'
night names "mkdir 'sp ace' \$'nl\\nx'; echo 1>'sp ace/f'; echo 2>\$'nl\\nx/g'; echo 3>\$'\\xff\\xfe'; echo 4>'b\\s'" \
	"echo x>>'sp ace/f'; echo y>>\$'\\xff\\xfe'; echo z>>'b\\s'" "rm -rf \$'nl\\nx'; mv 'sp ace' 'sp  ace'"
night modes 'mkdir -p a/b; echo 1>a/b/f; chmod 755 a' 'chmod 700 a/b' 'chmod +x a/b/f' 'chmod 000 a/b' 'chmod 755 a/b; chmod -x a/b/f'
night nothing 'mkdir a; echo 1>a/f' 'true' 'touch a/f' 'true'
night hardlater 'mkdir a b; echo 1>a/f; echo 2>b/g' 'ln a/f b/h' 'echo 3>>a/f' 'rm a/f'
night hardbefore 'mkdir a b; echo 1>a/f; ln a/f b/h; echo 2>b/g' 'echo 3>>b/g' 'echo x>>a/f' 'rm b/h' 'echo y>>b/g'
night deep 'p=$(printf "d/%.0s" $(seq 120)); mkdir -p $p; echo 1>${p}f; echo 2>d/g' \
	'p=$(printf "d/%.0s" $(seq 120)); echo 3>>${p}f' 'mv d e' 'mkdir d; echo q>d/g'
night typeflip 'echo 1>x; mkdir y; echo 2>y/z' 'rm x; mkdir x; echo 3>x/x; rm -rf y; echo 4>y' \
	'rm -rf x y; ln -s nowhere x; ln -s x y' 'rm x y; mkdir -p x/y; echo 5>x/y/x'
night rootall 'mkdir a; echo 1>a/f' 'rm -rf a; mkdir b; echo 2>b/g' 'rm -rf *; mkdir a; echo 3>a/f'
EXCLUDE="--exclude a/b --exclude x" night exclude 'mkdir -p a/b x; echo 1>a/b/f; echo 2>a/g; echo 3>x/y' \
	'echo 4>>a/b/f; echo 5>>a/g; echo 6>>x/y' 'rm -rf a/b; mkdir a/b; echo 7>a/b/z' 'rm -rf x; echo file>x'

# A tampered layer after the first step (new data, or a hard link the set leaves out) is refused
# by the partial patch as by the whole one.
r=$T/tamper; cp -r "$T/rename/run" "$r"
for kind in data link; do
	python3 - "$r/snapshots/0002.tar.zst" $kind <<'PY'
import io, subprocess, sys, tarfile
b = io.BytesIO()
with tarfile.open(fileobj=b, mode="w", format=tarfile.PAX_FORMAT) as t:
    ti = tarfile.TarInfo("b/x/f1")
    if sys.argv[2] == "link":
        ti.type, ti.linkname = tarfile.LNKTYPE, "b/x/f2"
        t.addfile(ti)
    else:
        ti.size = 5
        t.addfile(ti, io.BytesIO(b"evil\n"))
subprocess.run(["zstd", "-q", "-f", "-o", sys.argv[1]], input=b.getvalue(), check=True)
PY
	"$T/snapdrive" patch "$r" 1 end >/dev/null 2>"$T/te"; r1=$?
	"$T/snapdrive" patch "$r" 1 end --whole >/dev/null 2>"$T/tw"; r2=$?
	check "tampered ($kind): the partial patch fails" test $r1 != 0
	expect_eq "tampered ($kind): as the whole one, saying the same" "$(tail -1 "$T/tw")" "$(tail -1 "$T/te")"
done
done_tests
