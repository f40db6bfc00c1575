#!/bin/sh
# mkdeb.sh NIGHTSHIFT OUTDIR: a Debian package of the built binary (installed by `make install
# DESTDIR=... PREFIX=/usr`), with Depends found by dpkg-shlibdeps from the libraries it links,
# written as OUTDIR/nightshift_VERSION_ARCH.deb (the path is printed).
set -eu
ns=$1 out=$2
top=$(cd "$(dirname "$0")/.." && pwd)
ver=$("$ns" --version | sed 's/^nightshift //')
arch=$(dpkg --print-architecture)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage=$work/root
make -s -C "$top" install-files NS="$ns" DESTDIR="$stage" PREFIX=/usr
# dpkg-shlibdeps wants a source package's layout to read; a minimal one in the work folder.
mkdir -p "$work/debian"
printf 'Source: nightshift\n\nPackage: nightshift\nArchitecture: any\n' >"$work/debian/control"
deps=$(cd "$work" && dpkg-shlibdeps -O -e"$stage/usr/bin/nightshift" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$deps" ] || { echo "mkdeb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
size=$(du -sk "$stage" | cut -f1)
mkdir -p "$stage/DEBIAN"
cat >"$stage/DEBIAN/control" <<CTL
Package: nightshift
Version: $ver
Architecture: $arch
Maintainer: nightshift developers <nightshift@localhost>
Installed-Size: $size
Depends: $deps
Recommends: git, zstd, openssh-client
Section: utils
Priority: optional
Homepage: https://github.com/nightshift/nightshift
Description: run LLM worker jobs with nobody at the keyboard
 nightshift reads a YAML manifest of jobs; each job runs an LLM agent whose every tool call
 is decided by approval rules written in advance and run in a sandbox (Linux namespaces,
 Docker/Podman, or none). The workspace is snapshotted before each step and everything is
 recorded as verifiable artifacts that stock tar, zstd, sha256sum and ssh-keygen check.
CTL
mkdir -p "$out"
deb=$out/nightshift_${ver}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
