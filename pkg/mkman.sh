#!/bin/sh
# mkman.sh NIGHTSHIFT: nightshift(1) on stdout, made from the binary's own --help texts (the
# overview and every subcommand's), so the page cannot say other than the program does.
set -eu
ns=$1
ver=$("$ns" --version | sed 's/^nightshift //')
# roff-safe: backslashes doubled, a leading . or ' escaped, each help line kept as written.
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
cat <<HEAD
.TH NIGHTSHIFT 1 "" "nightshift $ver" "User Commands"
.SH NAME
nightshift \\- run LLM worker jobs with nobody at the keyboard
.SH SYNOPSIS
.B nightshift
.I COMMAND
.RI [ ARGS ]
.SH DESCRIPTION
nightshift reads a YAML manifest of jobs; each job runs a worker (an LLM agent with an
instruction, opt-in tools and a typed result). Every tool call is decided by approval rules
written in the manifest, every allowed call runs in a sandbox, the workspace is snapshotted
before each step, and everything is recorded as artifacts that stock tar, zstd, sha256sum
and ssh-keygen check.
.PP
.nf
HEAD
"$ns" --help | esc
echo ".fi"
echo ".SH COMMANDS"
for c in $("$ns" --help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p; s/^  \([a-z][a-z]*\)$/\1/p' | sort -u); do
	"$ns" "$c" --help >/dev/null 2>&1 || continue
	echo ".SS $c"
	echo ".nf"
	"$ns" "$c" --help | esc
	echo ".fi"
done
cat <<'TAIL'
.SH FILES
.TP
.I $XDG_CONFIG_HOME/nightshift/config.yaml
a user's defaults (models, out, sandbox); see nightshift config
.TP
.I /etc/nightshift/policy.yaml
the admin policy: approval rules, budget caps and sandbox floors no manifest can weaken
.SH SEE ALSO
.BR ssh-keygen (1),
.BR tar (1),
.BR zstd (1),
.BR sha256sum (1)
TAIL
