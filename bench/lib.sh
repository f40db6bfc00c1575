# lib.sh: what the benchmarks share. Source it; it is no benchmark of its own (bench/run skips it).

# benchbuild NAME: builds bench/NAME.c into $tmp/NAME (tmp: the bench's scratch folder), linked
# with the libnightshift.a beside $NIGHTSHIFT, or one built into $tmp/build when there is none.
benchbuild() {
	local here root lib pkgs
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	root=$(dirname "$here")
	lib=""
	[ -n "${NIGHTSHIFT:-}" ] && lib="$(dirname "$NIGHTSHIFT")/libnightshift.a"
	if [ -z "$lib" ] || [ ! -f "$lib" ]; then
		make -C "$root" -s O="$tmp/build" "$tmp/build/libnightshift.a" >/dev/null || return 1
		lib="$tmp/build/libnightshift.a"
	fi
	pkgs="libcurl libcjson yaml-0.1 libarchive libzstd libseccomp libcrypto zlib" # the Makefile's PKGS
	# shellcheck disable=SC2046
	cc -std=c11 -D_GNU_SOURCE -O2 $(pkg-config --cflags $pkgs) -o "$tmp/$1" "$here/$1.c" "$lib" \
		$(pkg-config --libs $pkgs) -lpthread -lm
}

# freshext4 IMG MB DIR: makes a new ext4 of MB megabytes in the file IMG (journaled, mkfs's
# defaults, inode tables written now) and mounts it on DIR. Root only; fails when it cannot.
# A used disk carries its history: ext4 without a journal scans every inode deleted in the last
# minute for each file it creates, so a job that replaces files slows every later create.
freshext4() {
	[ "$(id -u)" = 0 ] && command -v mkfs.ext4 >/dev/null || return 1
	truncate -s 0 "$1" && truncate -s "$2M" "$1" &&
		mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$1" && mount -o loop "$1" "$3" && sync
}

# goal LABEL VALUE UNIT OP LIMIT: prints one figure beside its goal and a verdict, e.g.
#   goal "audit --verify" 1.42 s '<=' 2   ->   audit --verify  1.42 s   goal <= 2 s: met
# OP is <= or >=. A goal missed is said, not failed: figures depend on the machine.
goal() {
	local verdict
	verdict=$(awk -v v="$2" -v op="$4" -v l="$5" 'BEGIN { ok = op == "<=" ? v <= l : v >= l; print ok ? "met" : "NOT met" }')
	printf '%-40s %10s %-3s  goal %s %s %s: %s\n' "$1" "$2" "$3" "$4" "$5" "$3" "$verdict"
}
