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
. "$(dirname "$0")/lib.sh"
measure() {  # measure COMMAND...: "seconds MB" of one run; its errors go to stderr, not hidden
	/usr/bin/time -f "%e %M" -o "$T/time" "$@" > /dev/null 2>"$T/err" || { cat "$T/err" >&2; return 1; }
	read -r s kb < "$T/time"
	echo "$s $(echo "$kb / 1024" | bc -l | xargs printf '%.1f')"
}
echo "audit of a run with $N events ($(du -h "$T/run/jobs/big/events.jsonl.zst" | cut -f1) compressed)"
read -r floor fmb < <(measure bash -c "zstd -dcq '$T/run/jobs/big/events.jsonl.zst' | sha256sum") || exit 1
printf '%-40s %10s s    (the floor: reading the log at all)\n' "zstd -dc | sha256sum" "$floor"
for what in "audit --verify:--verify" "audit (table):" "audit --json:--json"; do
	label=${what%%:*} flag=${what#*:}
	# shellcheck disable=SC2086
	read -r s mb < <(measure "$NS" audit "$T/run" $flag) || { echo "nightshift $label failed" >&2; exit 1; }
	goal "nightshift $label: time" "$s" s '<=' 2
	goal "nightshift $label: peak RSS" "$mb" MB '<=' 64
	printf '%-40s %10.1f x\n' "  ratio to the floor" "$(echo "$s / $floor" | bc -l)"
done
