#!/usr/bin/env bash
# report of a generated run with 10,000 tool calls (40,000 events): time and peak RSS of
# `nightshift report`, the page's size, and the time headless Chromium takes to load and lay it out
# (--dump-dom of the page, less the same for an empty page: the browser's own start). Target: < 2 s.
set -eu
NS=${NIGHTSHIFT:-./nightshift}
N=${REPORT_EVENTS:-40000}
T=$(mktemp -d /tmp/ns-bench-report.XXXXXX)
trap 'rm -rf "$T"' EXIT
python3 "$(dirname "$0")/genrun.py" "$T/run" "$N"
/usr/bin/time -f "%e %M" -o "$T/time" "$NS" report "$T/run" --out "$T/r.html" >/dev/null
read -r s kb <"$T/time"
printf 'nightshift report, %d calls: %.2f s, %.1f MB peak, page %.1f MB\n' $((N / 4)) "$s" "$(echo "$kb / 1024" | bc -l)" \
	"$(echo "$(stat -c %s "$T/r.html") / 1048576" | bc -l)"
browser=$(command -v chromium || true)
if [ -z "$browser" ]; then
	echo "SKIPPED browser load: no chromium (apt-get install chromium)"
	exit 0
fi
printf '<!doctype html><title>x</title>' >"$T/empty.html"
load() {  # seconds for chromium to load and dump the page, best of 3
	local best=999
	for _ in 1 2 3; do
		local t0 t1
		t0=$(date +%s.%N)
		HOME="$T" timeout 120 "$browser" --headless=new --no-sandbox --disable-gpu --no-first-run \
			--user-data-dir="$T/profile" --dump-dom "file://$1" >/dev/null 2>&1
		t1=$(date +%s.%N)
		best=$(echo "t=$t1 - $t0; if (t < $best) t else $best" | bc -l)
	done
	echo "$best"
}
empty=$(load "$T/empty.html")
page=$(load "$T/r.html")
printf 'chromium: empty page %.2f s, the report %.2f s: the page itself %.2f s (target < 2 s)\n' "$empty" "$page" \
	"$(echo "$page - $empty" | bc -l)"
