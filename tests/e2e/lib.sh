# lib.sh: helpers for end-to-end tests; source it, call check/expect, end with `done_tests`.
set -u
: "${NIGHTSHIFT:?set NIGHTSHIFT to the binary under test}"
NS=$NIGHTSHIFT
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
T=$(mktemp -d /tmp/ns-e2e.XXXXXX)
trap 'rm -rf "$T"' EXIT
_pass=0 _fail=0

# check NAME COMMAND...: passes when the command exits 0.
check() {
	local name=$1; shift
	if "$@"; then _pass=$((_pass + 1)); else _fail=$((_fail + 1)); echo "FAIL $name"; fi
}

# expect_rc NAME WANT GOT: passes when two exit codes agree.
expect_rc() {
	if [ "$2" = "$3" ]; then _pass=$((_pass + 1)); else _fail=$((_fail + 1)); echo "FAIL $1: exit $3, want $2"; fi
}

# expect_eq NAME WANT GOT
expect_eq() {
	if [ "$2" = "$3" ]; then _pass=$((_pass + 1)); else _fail=$((_fail + 1)); printf 'FAIL %s:\n  want: %s\n  got:  %s\n' "$1" "$2" "$3"; fi
}

# expect_grep NAME PATTERN FILE: passes when FILE has a line matching the extended regex.
expect_grep() {
	if grep -Eq -- "$2" "$3"; then _pass=$((_pass + 1)); else _fail=$((_fail + 1)); echo "FAIL $1: no /$2/ in $3"; head -c 2000 "$3"; echo; fi
}

# expect_nogrep NAME PATTERN FILE
expect_nogrep() {
	if ! grep -Eq -- "$2" "$3"; then _pass=$((_pass + 1)); else _fail=$((_fail + 1)); echo "FAIL $1: /$2/ found in $3"; fi
}

# snapdrive_build: $T/snapdrive (bench/snapdrive.c) against the libnightshift.a beside $TESTBIN
# (built here when there is none), with the sanitizer runtimes when that library has them;
# the compiler's words in $T/cc.log.
snapdrive_build() {
	local pkgs="libcurl libcjson yaml-0.1 libarchive libzstd libseccomp libcrypto" lib san=
	lib=${TESTBIN:+$(dirname "$TESTBIN")/libnightshift.a}
	if [ -z "$lib" ] || [ ! -f "$lib" ]; then
		make -C "$ROOT" -s O="$T/build" "$T/build/libnightshift.a" >/dev/null 2>&1
		lib=$T/build/libnightshift.a
	fi
	nm "$lib" 2>/dev/null | grep -q __asan_ && san="-fsanitize=address,undefined"
	# shellcheck disable=SC2046
	cc -std=c11 -D_GNU_SOURCE -O2 $san $(pkg-config --cflags $pkgs) -o "$T/snapdrive" "$ROOT/bench/snapdrive.c" "$lib" \
		$(pkg-config --libs $pkgs) -lpthread 2>"$T/cc.log"
}

# waitfor SECONDS COMMAND...: runs COMMAND every 50 ms until it succeeds (0) or SECONDS have
# passed (1). For conditions a test waits on: bounds are generous, a loaded machine is slow.
waitfor() {
	local end=$((SECONDS + $1)); shift
	until "$@"; do
		[ "$SECONDS" -ge "$end" ] && return 1
		sleep 0.05
	done
}

# running PATTERN: some process's command line matches the extended regex PATTERN (make it
# unique to the test: a mark with $$ and $RANDOM, or a path under $T).
running() { pgrep -f -- "$1" >/dev/null; }
notrunning() { ! pgrep -f -- "$1" >/dev/null; }

# gone PATTERN [SECONDS]: waits (30 s by default) until no process's command line matches
# PATTERN; when some still do, prints them and fails.
gone() {
	waitfor "${2:-30}" notrunning "$1" && return 0
	echo "still running after ${2:-30} s:"; pgrep -af -- "$1"
	return 1
}

# userns: user namespaces work here (the namespace sandbox needs them).
# asan: nightshift is built with AddressSanitizer (make SANITIZE=1): its shadow memory needs a huge
# address space (no ulimit -v), and its quarantine keeps freed memory resident a while.
asan() { ldd "$NS" 2>/dev/null | grep -q libasan; }

userns() { [ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null)" != 0 ] && unshare -U true 2>/dev/null; }

# needuserns NAME [WHY]: where user namespaces do not work, says the test cannot run and ends it.
needuserns() {
	userns && return 0
	skip "$1" "${2:-user namespaces are not available here, the namespace sandbox cannot run}"
	done_tests
	exit
}

# relist RUN FILE...: FILE's lines of RUN/SHA256SUMS made anew from the files as they are (a run
# rewritten by an attack that keeps its sums right).
relist() {
	local r=$1; shift
	for f in "$@"; do grep -v "  $f\$" "$r/SHA256SUMS" >"$r/S" && mv "$r/S" "$r/SHA256SUMS"; done
	(cd "$r" && sha256sum "$@" >>SHA256SUMS)
}

# skip NAME WHY: says loudly that a check did not run; never counted as passed.
skip() { echo "SKIPPED $1: $2"; }

done_tests() {
	echo "$_pass passed, $_fail failed"
	[ "$_fail" = 0 ]
}
