#!/usr/bin/env bash
# layering: the rooms of README's layout use each other in one direction only. The rule, written
# once: a room may use its own files and the rooms listed after it here, nothing else.
#   cmd: run mcp llm policy sandbox net artifacts snapshot manifest util
#   run: mcp llm policy sandbox net artifacts snapshot manifest util
#   mcp: sandbox net manifest util
#   llm: artifacts manifest util
#   policy: manifest util
#   sandbox: net manifest util
#   net: manifest util
#   artifacts: snapshot manifest util
#   snapshot: manifest util
#   manifest: util
#   util:
# Includes are read from the sources; calls from the objects' symbols (nm) in the build folder.
# Also checked: no include cycle between files, no two files calling each other, no room holding
# more than 15 % of the code, and no exported function that nothing calls.
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
build=$(dirname "$NIGHTSHIFT")

rule=$(sed -n 's/^#   \([a-z]*\):\(.*\)/\1:\2/p' "$0")
rooms=$(echo "$rule" | cut -d: -f1 | tr '\n' ' ')
# violations < "FROM TO [WHAT]" lines: those the rule does not allow, as "FROM TO [WHAT]".
violations() {
	awk -v rule="$rule" 'BEGIN { n = split(rule, lines, "\n"); for (i = 1; i <= n; i++) {
			split(lines[i], kv, ":"); m = split(kv[2], to, " "); for (k = 1; k <= m; k++) ok[kv[1] " " to[k]] = 1 } }
		{ a = $1; sub(/\/.*/, "", a); b = $2; sub(/\/.*/, "", b); if (a != b && !((a " " b) in ok)) print }'
}
srcs() { for r in $rooms; do git ls-files "$r/*.$1"; done; }

expect_eq "every room of the Makefile is in the rule" "" \
	"$(for r in $(sed -n 's/^ROOMS = //p' Makefile) cmd; do echo "$rule" | grep -q "^$r:" || echo "$r"; done)"
expect_eq "every room of the rule is a folder" "" "$(for r in $rooms; do [ -d "$r" ] || echo "$r"; done)"

bad=$T/bad
: >"$bad"
incs=$T/incs
: >"$incs"
nfiles=0
srcs '[ch]' >"$T/srcs"
nfiles=$(wc -l <"$T/srcs")
# "FILE INCLUDED" for every quoted include, the included path made relative to the top.
xargs grep -H '^#include "' <"$T/srcs" | sed 's/:#include "\([^"]*\)".*/ \1/' |
	python3 -c 'import os, sys
for l in sys.stdin:
    f, inc = l.split()
    print(f, os.path.normpath(os.path.join(os.path.dirname(f), inc)))' >"$incs"
violations <"$incs" | sed 's/ / includes /' >"$bad"
expect_eq "every source file read" 1 "$([ "$nfiles" -gt 50 ] && echo 1)"
expect_eq "includes follow the rooms' rule" "" "$(cat "$bad")"
# No include cycle between files (a header that would reach itself again).
cyc=$(sort -u "$incs" | tsort 2>&1 >/dev/null | head -n 5)
expect_eq "no include cycle between files" "" "$cyc"

# No room holds more than 15 % of the code in its own files.
total=$(cat $(srcs '[ch]') | wc -l)
: >"$bad"
for r in $rooms; do
	n=$(cat $(git ls-files "$r/*.[ch]") /dev/null | wc -l)
	[ $((n * 100)) -le $((total * 15)) ] || echo "$r holds $n of $total lines" >>"$bad"
done
expect_eq "no room over 15 % of the code" "" "$(cat "$bad")"

# Calls: which object defines each global symbol, then who uses it.
edges=$T/edges
objs=
for f in $(srcs c); do
	[ -f "$build/${f%.c}.o" ] && objs="$objs $build/${f%.c}.o"
done
if [ -z "$objs" ]; then
	skip "calls" "no objects under $build"
else
	nm -A --defined-only -g $objs | awk '$2 ~ /^[TDBR]$/ {sub(/:.*/, "", $1); print $3, $1}' | sort -k1,1 >"$T/defs"
	nm -A -u $objs | awk '{sub(/:.*/, "", $1); print $NF, $1}' | sort -k1,1 >"$T/uses"
	join "$T/uses" "$T/defs" | awk -v b="$build/" '{u=$2; d=$3; sub(b, "", u); sub(b, "", d); sub(/\.o$/, ".c", u); sub(/\.o$/, ".c", d); if (u != d) print u, d, $1}' | sort -u >"$edges"
	expect_eq "calls between files found" 1 "$([ "$(wc -l <"$edges")" -gt 100 ] && echo 1)"
	violations <"$edges" | awk '{print $1, "calls", $2, "(" $3 ")"}' >"$bad"
	expect_eq "calls follow the rooms' rule" "" "$(cat "$bad")"
	awk '{print $1, $2}' "$edges" | sort -u >"$T/pairs"
	awk '{print $2, $1}' "$T/pairs" | sort -u | comm -12 - "$T/pairs" | awk '$1 < $2' >"$bad"
	expect_eq "no two files call each other" "" "$(cat "$bad")"
	# Every exported function has a caller outside its own file (the tests, benches and fuzz
	# targets count: they are callers too). A function only its own file calls is made static.
	tobjs=$(ls "$build"/tests/*.o "$build"/fuzz/*.o 2>/dev/null)
	used=$T/used
	{ awk '{print $3}' "$edges"; for b in "$build"/tests/test_* "$build"/fuzz/fuzz_*; do
		[ -x "$b" ] && nm -u "$b" 2>/dev/null | awk '{print $NF}'; done; } | sort -u >"$used"
	# The unit tests link the library statically: what they call is in their own binary, so their
	# sources are read for names.
	cat tests/unit/*.c tests/fuzz/*.c bench/*.c 2>/dev/null | grep -o '\b[a-z_][a-z0-9_]*(' | tr -d '(' | sort -u >>"$used"
	sort -u -o "$used" "$used"
	nm --defined-only -g $objs | awk '$2 == "T" {print $3}' | sort -u | comm -23 - "$used" >"$bad"
	expect_eq "no exported function without a caller" "" "$(cat "$bad")"
fi
done_tests
