#!/usr/bin/env bash
# sparse: what a 2 GiB sparse file (`truncate -s 2G big`, 1 ms for the step) costs the runner.
#   layers of a workspace holding it (bench/snapdrive.c): time and bytes of the full layer, of a
#     layer after one byte was written at 1 GiB, and of end; restore of end: time and the blocks
#     the restored file takes
#   the peers in the same run: GNU tar --sparse | zstd -3, and GNU tar without --sparse | zstd -3
#     (what storing the file byte by byte costs: what snapshots did before)
#   the runner end to end: CPU (user + sys of nightshift and its children) of a 4-step scripted
#     run on the none backend whose first step makes the file, against the same run making a
#     4-byte file instead
# Best of $SPARSE_BENCH_REPS (3) rounds. Needs no root and a few MB of disk.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
reps=${SPARSE_BENCH_REPS:-3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ns-bench-sparse.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
ns=${NIGHTSHIFT:-$root/nightshift}

source "$here/lib.sh"
benchbuild snapdrive || exit 1

ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
min() { [ -z "$1" ] || [ "$2" -lt "$1" ] && echo "$2" || echo "$1"; }
field() { awk -v k="$2" -v f="$3" '$2 == k { printf "%d", $f }' "$1"; }
msof() { awk -v u="$1" 'BEGIN { printf "%.1f", u / 1000 }'; }
us() { awk -v k="$2" '$2 == k { printf "%d", $4 * 1000 }' "$1"; }
# CPU ms (user + sys) of a command and all its children.
cpu() { python3 -c '
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(int((r.ru_utime + r.ru_stime) * 1000))' "$@"; }

echo "== sparse: a 2 GiB sparse file in the workspace; best of $reps"
l1="" l2="" le="" rs="" ptar="" pfull="" bytes1=0 bytes2=0 bytese=0 blocks=0 ptarb=0 pfullb=0
for i in $(seq "$reps"); do
	rm -rf "$tmp/ws" "$tmp/run" "$tmp/out" && mkdir -p "$tmp/ws" && echo hello >"$tmp/ws/a"
	"$tmp/snapdrive" steps "$tmp/ws" "$tmp/run" --level 3 -- "truncate -s 2G big" \
		"printf x | dd of=big bs=1 seek=1073741824 conv=notrunc 2>/dev/null" >"$tmp/out.txt"
	l1=$(min "$l1" "$(us "$tmp/out.txt" 0002)") bytes1=$(field "$tmp/out.txt" 0002 6)
	l2=$(min "$l2" "$(us "$tmp/out.txt" 0003)") bytes2=$(field "$tmp/out.txt" 0003 6)
	le=$(min "$le" "$(us "$tmp/out.txt" end)") bytese=$(field "$tmp/out.txt" end 6)
	"$tmp/snapdrive" restore "$tmp/run" end "$tmp/out" >"$tmp/rout.txt"
	rs=$(min "$rs" "$(awk '$1 == "restore" { printf "%d", $3 * 1000 }' "$tmp/rout.txt")")
	blocks=$(stat -c %b "$tmp/out/big")
	t=$(date +%s%N); tar --sparse -cf - -C "$tmp/ws" big | zstd -3 -q >"$tmp/peer.tar.zst"; ptar=$(min "$ptar" "$(ms "$t")")
	ptarb=$(stat -c %s "$tmp/peer.tar.zst")
	t=$(date +%s%N); tar -cf - -C "$tmp/ws" big | zstd -3 -q >"$tmp/peerfull.tar.zst"; pfull=$(min "$pfull" "$(ms "$t")")
	pfullb=$(stat -c %s "$tmp/peerfull.tar.zst")
done
printf '%-46s %10s %10s\n' "" "time" "bytes"
printf '%-46s %8.1fms %10d\n' "layer holding the new 2 GiB sparse file" "$(msof $l1)" "$bytes1"
printf '%-46s %8.1fms %10d\n' "layer after 1 byte written at 1 GiB" "$(msof $l2)" "$bytes2"
printf '%-46s %8.1fms %10d\n' "end (what changed after the last layer)" "$(msof $le)" "$bytese"
printf '%-46s %8.1fms %10s\n' "restore --step end" "$(msof $rs)" "$blocks blocks"
printf '%-46s %8dms %10d\n' "peer: tar --sparse | zstd -3" "$ptar" "$ptarb"
printf '%-46s %8dms %10d\n' "peer: tar | zstd -3 (the file byte by byte)" "$pfull" "$pfullb"
goal "layer holding the 2 GiB sparse file" "$bytes1" bytes '<=' 1048576
goal "layer after 1 byte written at 1 GiB" "$bytes2" bytes '<=' 1048576
goal "restore --step end of it" "$(msof $rs)" ms '<=' 1000

# The runner end to end.
if [ ! -x "$ns" ]; then
	echo "SKIPPED sparse bench, runner part: $ns is not built"
	exit 0
fi
mk() { # DIR COMMAND: a 4-step run on the none backend whose first step runs COMMAND
	mkdir -p "$1/ws" && echo hello >"$1/ws/a"
	cat >"$1/m.yaml" <<YAML
version: 1
workspace: ws
sandbox: { backend: none }
models:
  m:
    provider: scripted
    replies:
      - { tool_calls: [ { name: shell, arguments: { command: "$2" } } ] }
      - { tool_calls: [ { name: shell, arguments: { command: "echo 1 >> a" } } ] }
      - { tool_calls: [ { name: shell, arguments: { command: "echo 2 >> a" } } ] }
      - { tool_calls: [ { name: shell, arguments: { command: "echo 3 >> a" } } ] }
      - { tool_calls: [ { name: final_result, arguments: {} } ] }
workers:
  w: { model: m, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
}
big="" small=""
for i in $(seq "$reps"); do
	rm -rf "$tmp/rb" "$tmp/rs"
	mk "$tmp/rb" "truncate -s 2G big"
	mk "$tmp/rs" "printf abcd > big"
	big=$(min "$big" "$(cpu "$ns" run "$tmp/rb/m.yaml" --out "$tmp/rb/runs")")
	small=$(min "$small" "$(cpu "$ns" run "$tmp/rs/m.yaml" --out "$tmp/rs/runs")")
done
ls -l "$tmp"/rb/runs/*/snapshots/ | awk 'NR > 1 { printf "  %s %s bytes\n", $9, $5 }'
printf '%-46s %8dms\n' "runner CPU, step 1 makes a 2 GiB sparse file" "$big"
printf '%-46s %8dms\n' "runner CPU, step 1 makes a 4-byte file" "$small"
printf '%-46s %8dms  (4 layers and end each hold or skip the file)\n' "the sparse file's cost" "$((big - small))"
goal "runner CPU the 2 GiB sparse file adds" "$((big - small))" ms '<=' 2000
