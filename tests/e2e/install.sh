#!/usr/bin/env bash
# install: nightshift installed as a tool. `make install PREFIX=` puts the binary, the man page and
# the completions in place and the installed binary runs the shipped example; the man page renders;
# the bash completion loads and completes; `make deb` builds a package whose Depends dpkg found,
# which installs with apt into a fresh Debian root (debootstrap) and runs the example there; the
# container image builds from that package and runs the example where an engine can be started.
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
O=$(dirname "$NIGHTSHIFT")

# --- make install into a prefix, then uninstall -------------------------------------------------
P=$T/prefix
make -s install-files NS="$NIGHTSHIFT" PREFIX="$P" >"$T/install.log" 2>&1
expect_rc "make install PREFIX=" 0 $?
check "binary installed" test -x "$P/bin/nightshift"
check "man page installed" test -f "$P/share/man/man1/nightshift.1.gz"
check "bash completion installed" test -f "$P/share/bash-completion/completions/nightshift"
check "zsh completion installed" test -f "$P/share/zsh/vendor-completions/_nightshift"
cp -R "$P/share/doc/nightshift/examples/hello" "$T/hello"
"$P/bin/nightshift" run "$T/hello/nightshift.yaml" --quiet >"$T/run.out" 2>"$T/run.err"
expect_rc "installed binary runs the example" 0 $?
check "its run directory verifies" "$P/bin/nightshift" audit "$(cat "$T/run.out")" --verify >/dev/null 2>&1
# The man page renders and holds every subcommand's --help.
man -l "$P/share/man/man1/nightshift.1.gz" >"$T/man.txt" 2>"$T/man.err" </dev/null
expect_rc "man -l renders the page" 0 $?
expect_eq "man -l says nothing on stderr" "" "$(grep -v 'cannot adjust line' "$T/man.err")"
for c in $("$NIGHTSHIFT" --help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p'); do
	expect_grep "man page has $c's usage" "nightshift $c" "$T/man.txt"
done
expect_grep "man page has run's --sign text" "unencrypted Ed25519 private key" "$T/man.txt"
# The completion loads in bash and completes subcommands, flags and a manifest's job ids.
comp() { PATH="$P/bin:$PATH" bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _nightshift; echo "${COMPREPLY[*]}"' _ "$P/share/bash-completion/completions/nightshift" "$@"; }
expect_eq "completes subcommands" "replay report restore" "$(comp nightshift re | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')"
expect_eq "completes a subcommand's flags" "--verify" "$(comp nightshift audit x --ver)"
expect_eq "completes job ids after --job" "hello" "$(comp nightshift run "$T/hello/nightshift.yaml" --job '')"
make -s uninstall PREFIX="$P" >/dev/null 2>&1
expect_eq "make uninstall leaves no file" "" "$(find "$P" -type f)"

# --- the .deb --------------------------------------------------------------------------------------
if ! command -v dpkg-deb >/dev/null || ! command -v dpkg-shlibdeps >/dev/null; then
	skip "the Debian package" "dpkg-deb or dpkg-shlibdeps (dpkg-dev) missing"
	done_tests
	exit
fi
deb=$(sh pkg/mkdeb.sh "$NIGHTSHIFT" "$T/deb" 2>"$T/deb.err")
expect_rc "make deb" 0 $?
deps=$(dpkg-deb -f "$deb" Depends)
for lib in libcurl4 libcjson1 libyaml-0-2 libarchive13 libzstd1 libseccomp2 libssl3 libc6; do
	case $deps in *"$lib"*) expect_eq "Depends names $lib" 1 1 ;; *) expect_eq "Depends names $lib" "$lib in it" "$deps" ;; esac
done
check "package holds the man page" sh -c "dpkg-deb -c '$deb' | grep -q 'man1/nightshift.1.gz'"

# A fresh Debian root: debootstrap from Debian's archive once, kept in /var/tmp for the next run.
root_ok() { [ -x "$1/usr/bin/apt-get" ] && [ -f "$1/etc/debian_version" ]; }
cache=/var/tmp/nightshift-tests/bookworm-minbase.tar
if [ "$(id -u)" != 0 ]; then
	skip "the package in a fresh Debian root" "debootstrap and chroot need root"
	done_tests
	exit
fi
if [ ! -f "$cache" ]; then
	command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >"$T/apt.log" 2>&1
	mkdir -p "$(dirname "$cache")"
	if debootstrap --variant=minbase bookworm "$T/boot" http://deb.debian.org/debian >"$T/debootstrap.log" 2>&1 &&
		root_ok "$T/boot"; then
		tar -C "$T/boot" -cf "$cache.tmp" . && mv "$cache.tmp" "$cache"
	fi
	rm -rf "$T/boot"
fi
if [ ! -f "$cache" ]; then
	skip "the package in a fresh Debian root" "debootstrap failed: $(tail -n 2 "$T/debootstrap.log" 2>/dev/null)"
	done_tests
	exit
fi
R=$T/debroot
mkdir -p "$R" && tar -C "$R" -xf "$cache"
cp /etc/resolv.conf "$R/etc/resolv.conf"
cp "$deb" "$R/tmp/nightshift.deb"
# Inside its own mount namespace the root is pivoted (not chrooted): the kernel refuses a user
# namespace to a chrooted process, and the example's sandbox needs one.
cat >"$R/tmp/inside.sh" <<'IN'
set -e
export DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin
apt-get update -q >/tmp/apt.log 2>&1
apt-get install -y -q --no-install-recommends /tmp/nightshift.deb >>/tmp/apt.log 2>&1 || { tail -n 20 /tmp/apt.log; exit 3; }
cp -R /usr/share/doc/nightshift/examples/hello /tmp/hello
dir=$(nightshift run /tmp/hello/nightshift.yaml --quiet)
nightshift audit "$dir" --verify >/dev/null
echo "ran $dir"
IN
unshare -m --propagation private sh -c '
	set -e
	mount --bind "$1" "$1"
	mount -t proc proc "$1/proc"
	mount --rbind /dev "$1/dev"
	mount -t tmpfs tmpfs "$1/sys" && mkdir -p "$1/sys/fs" && true
	cd "$1" && mkdir -p .old && pivot_root . .old && umount -l /.old
	exec /bin/bash /tmp/inside.sh' _ "$R" >"$T/inside.out" 2>&1
rc=$?
expect_rc "the .deb installs with apt in a fresh Debian root and runs the example" 0 $rc
[ $rc = 0 ] || cat "$T/inside.out"
expect_grep "the example ran there" '^ran /' "$T/inside.out"

# --- the container image ---------------------------------------------------------------------------
. "$ROOT/tests/dockerenv.sh"
if ! docker_up "$T"; then
	skip "the container image" "$DOCKER_WHY"
	done_tests
	exit
fi
# The base image, made from the same Debian root (the registry is not reachable from here).
if ! docker image inspect debian:bookworm-slim >/dev/null 2>&1; then
	tar -C "$R" -c . | docker import - debian:bookworm-slim >/dev/null
fi
ctx=$T/ctx
mkdir -p "$ctx"
cp pkg/Dockerfile "$ctx/" && cp "$deb" "$ctx/nightshift.deb"
docker build --network host -q -t nightshift-test:pkg "$ctx" >"$T/build.log" 2>&1
expect_rc "the image builds from the package" 0 $?
# The example's namespace sandbox inside a container: user namespaces (seccomp and AppArmor
# unconfined) and a /proc it may mount again (systempaths unconfined), as docs/install.md says.
docker run --rm --security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined \
	--entrypoint sh nightshift-test:pkg -c 'cp -R /usr/share/doc/nightshift/examples/hello /tmp/h && nightshift run /tmp/h/nightshift.yaml --quiet && echo IMAGE-RAN' >"$T/img.out" 2>&1
expect_rc "the image runs the example" 0 $?
expect_grep "the image's run printed its directory" 'IMAGE-RAN' "$T/img.out"
# Each build leaves the last one's image untagged: with the vfs driver, 600 MB a run.
docker rmi -f nightshift-test:pkg >/dev/null 2>&1
docker image prune -f >/dev/null 2>&1
done_tests
