#!/usr/bin/env bash
# layering: the layers of shared/DESIGN.md hold in the code. From the top:
#   cmd/ -> runner/ -> runner/llm/, runner/sandbox/ -> artifacts/ -> manifest/ -> util/
# A file may include or call a file of its own folder or of a lower layer, never one above or
# beside it (llm and sandbox do not reach each other), and no two files call each other.
# Includes are read from the sources; calls from the objects' symbols (nm) in the build folder.
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
build=$(dirname "$NIGHTSHIFT")

rank() {
	case $1 in
	cmd/*) echo 6 ;; runner/llm/* | runner/sandbox/*) echo 4 ;; runner/*) echo 5 ;;
	artifacts/*) echo 3 ;; manifest/*) echo 2 ;; util/*) echo 1 ;; *) echo 0 ;;
	esac
}
group() { case $1 in runner/llm/*) echo llm ;; runner/sandbox/*) echo sandbox ;; *) echo "${1%%/*}" ;; esac; }
# may FROM use TO?
allowed() { [ "$(group "$1")" = "$(group "$2")" ] || [ "$(rank "$2")" -lt "$(rank "$1")" ]; }

bad=$T/bad
: >"$bad"
nfiles=0
for f in $(git ls-files 'cmd/*.[ch]' 'runner/*.[ch]' 'artifacts/*.[ch]' 'manifest/*.[ch]' 'util/*.[ch]'); do
	nfiles=$((nfiles + 1))
	d=$(dirname "$f")
	for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
		t=$(realpath -m --relative-to=. "$d/$inc")
		allowed "$f" "$t" || echo "$f includes $t" >>"$bad"
	done
done
expect_eq "every source file read" 1 "$([ "$nfiles" -gt 50 ] && echo 1)"
expect_eq "includes follow the layers" "" "$(cat "$bad")"

# Calls: which object defines each global symbol, then who uses it.
edges=$T/edges
objs=
for f in $(git ls-files 'cmd/*.c' 'runner/*.c' 'artifacts/*.c' 'manifest/*.c' 'util/*.c'); do
	[ -f "$build/${f%.c}.o" ] && objs="$objs $build/${f%.c}.o"
done
if [ -z "$objs" ]; then
	skip "calls" "no objects under $build"
else
	nm -A --defined-only -g $objs | awk '$2 ~ /^[TDBR]$/ {sub(/:.*/, "", $1); print $3, $1}' | sort -k1,1 >"$T/defs"
	nm -A -u $objs | awk '{sub(/:.*/, "", $1); print $NF, $1}' | sort -k1,1 >"$T/uses"
	join "$T/uses" "$T/defs" | awk -v b="$build/" '{u=$2; d=$3; sub(b, "", u); sub(b, "", d); sub(/\.o$/, ".c", u); sub(/\.o$/, ".c", d); if (u != d) print u, d, $1}' | sort -u >"$edges"
	expect_eq "calls between files found" 1 "$([ "$(wc -l <"$edges")" -gt 100 ] && echo 1)"
	: >"$bad"
	while read -r u d sym; do
		allowed "$u" "$d" || echo "$u calls $d ($sym)" >>"$bad"
	done <"$edges"
	expect_eq "calls follow the layers" "" "$(cat "$bad")"
	awk '{print $1, $2}' "$edges" | sort -u >"$T/pairs"
	awk '{print $2, $1}' "$T/pairs" | sort -u | comm -12 - "$T/pairs" | awk '$1 < $2' >"$bad"
	expect_eq "no two files call each other" "" "$(cat "$bad")"
fi
done_tests
