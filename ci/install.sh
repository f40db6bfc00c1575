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
