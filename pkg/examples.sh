#!/bin/sh
# examples.sh: the files of examples/ that ship (make install's examples, the recipes `nightshift
# init` writes), one a line, sorted; run from the top of the source tree. What git tracks or
# would add, never what it ignores: a run the user made of an example (examples/*/runs/) and
# what an example writes when it runs. Git refuses a checkout another uid owns ("dubious
# ownership": root's `sudo make install` from the user's checkout), so this tree alone is named
# safe for the one read-only ls-files (no fsmonitor). Without git, the patterns .gitignore gives
# for examples/ are left out here.
set -eu
if git -c safe.directory="$PWD" -c core.fsmonitor=false rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git -c safe.directory="$PWD" -c core.fsmonitor=false ls-files --cached --others --exclude-standard -- examples
else
	find examples -type f | grep -v -e '^examples/[^/]*/runs/' -e '^examples/hello/workspace/reports/'
fi | LC_ALL=C sort
