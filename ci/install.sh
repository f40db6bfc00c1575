#!/usr/bin/env bash
# Installs what nightshift needs to build and to run its tests on Debian 12 / Ubuntu
# (the packages are listed in ci/packages.txt); uses sudo when not root, and only for what is
# missing: on a machine that has them all (an admin installed them) it needs no root at all.
set -eu
cd "$(dirname "$0")/.."
missing=()
# shellcheck disable=SC2013
for p in $(cat ci/packages.txt); do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
# Node and npm for the MCP and OpenTelemetry tests: Debian's, unless a Node is installed already (a
# NodeSource nodejs carries its own npm and conflicts with Debian's npm package).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	missing+=(nodejs npm)
fi
if [ ${#missing[@]} = 0 ]; then
	echo "ci/install.sh: every package of ci/packages.txt (and node, npm) is installed already"
	exit 0
fi
SUDO=
if [ "$(id -u)" != 0 ]; then
	if ! command -v sudo >/dev/null; then
		echo "ci/install.sh: missing: ${missing[*]}" >&2
		echo "ci/install.sh: installing them needs root, and there is no sudo: as root, run" >&2
		echo "  apt-get install -y --no-install-recommends ${missing[*]}" >&2
		exit 1
	fi
	SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${missing[@]}"
