#!/usr/bin/env bash
# Installs what nightshift needs to build and to run its tests on Debian 12 / Ubuntu
# (the packages are listed in ci/packages.txt); uses sudo when not root.
set -eu
cd "$(dirname "$0")/.."
SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
# shellcheck disable=SC2046
$SUDO apt-get install -y --no-install-recommends $(cat ci/packages.txt)
# Node and npm for the MCP and OpenTelemetry tests: Debian's, unless a Node is installed already (a
# NodeSource nodejs carries its own npm and conflicts with Debian's npm package).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	$SUDO apt-get install -y --no-install-recommends nodejs npm
fi
