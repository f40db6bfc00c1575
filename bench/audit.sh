#!/usr/bin/env bash
# audit of a generated run with 1,000,000 events: time and peak RSS of `audit --verify` and of the
# call table, beside `zstd -dc | sha256sum` of the same log as the floor (reading it at all).
# Targets: <= 2 s, <= 64 MB.
set -eu
NS=${NIGHTSHIFT:-./nightshift}
N=${AUDIT_EVENTS:-1000000}
T=$(mktemp -d /tmp/ns-bench-audit.XXXXXX)
trap 'rm -rf "$T"' EXIT
python3 "$(dirname "$0")/genrun.py" "$T/run" "$N"
measure() {  # measure LABEL COMMAND...: prints seconds and peak RSS in MB
	local label=$1; shift
	/usr/bin/time -f "%e %M" -o "$T/time" "$@" > /dev/null 2>"$T/err" || { cat "$T/err"; return 1; }
	read -r s kb < "$T/time"
	printf '%-34s %6.2f s  %6.1f MB\n' "$label" "$s" "$(echo "$kb / 1024" | bc -l)" >&2
	echo "$s"
}
echo "audit of a run with $N events ($(du -h "$T/run/jobs/big/events.jsonl.zst" | cut -f1) compressed)"
floor=$(measure "zstd -dc | sha256sum (floor)" bash -c "zstd -dcq '$T/run/jobs/big/events.jsonl.zst' | sha256sum")
v=$(measure "nightshift audit --verify" "$NS" audit "$T/run" --verify)
t=$(measure "nightshift audit (table)" "$NS" audit "$T/run")
j=$(measure "nightshift audit --json" "$NS" audit "$T/run" --json)
printf 'ratios to the floor: verify %.1fx, table %.1fx, json %.1fx (targets: <= 2 s, <= 64 MB)\n' \
	"$(echo "$v / $floor" | bc -l)" "$(echo "$t / $floor" | bc -l)" "$(echo "$j / $floor" | bc -l)"
