#!/usr/bin/env bash
# fan-out: eight matrix jobs, each on its own workspace, each with FAN_STEPS shell steps (default
# 4), against a loopback model that takes FAN_DELAY seconds per turn (default 1): wall time of
# the run at -j 8 beside -j 1, as a ratio (aim: 0.2 or less), and the sandbox step and snapshot
# cost per step in both, read from the event logs (snapshot: from the decision to the snapshot
# event; sandbox: the tool_result's duration_ms), which must not grow with -j.
. "$(dirname "$0")/lib.sh" # goal
set -eu
NS=${NIGHTSHIFT:-./nightshift}
STEPS=${FAN_STEPS:-4}
DELAY=${FAN_DELAY:-1}
here=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d /tmp/ns-bench-fanout.XXXXXX)
python3 "$here/fanmodel.py" "$T/port" "$STEPS" "$DELAY" & srv=$!
trap 'kill $srv 2>/dev/null; [ -n "${FAN_KEEP:-}" ] || rm -rf "$T"' EXIT
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
for r in $(seq 8); do
	mkdir -p "$T/repos/r$r/src"
	for i in $(seq 200); do echo "file $i of r$r" > "$T/repos/r$r/src/f$i"; done
done
cat > "$T/m.yaml" <<EOF2
version: 1
workspace: repos
models:
  default: { provider: openai, base_url: "http://127.0.0.1:$(cat "$T/port")/v1", model: fan, retries: 0 }
sandbox: { backend: namespace, network: none, timeout: 60s }
workers:
  fixer: { instructions: Fix., tools: [shell], approval: { rules: [ { tool: shell, decision: allow } ] }, max_turns: 20 }
jobs:
  fix:
    worker: fixer
    input: "Fix \${{ matrix.repo }}."
    matrix: { repo: [r1, r2, r3, r4, r5, r6, r7, r8] }
    fail_fast: false
    workspace: repos/\${{ matrix.repo }}
EOF2
# costs RUN: median snapshot and sandbox ms per step over every job of the run
costs() {
	for f in "$1"/jobs/*/events.jsonl.zst; do zstd -dcq "$f"; echo; done | python3 -c '
import json, sys, statistics
from datetime import datetime
t = lambda s: datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp() * 1000
snap, box, last = [], [], None
for line in sys.stdin:
    if not line.strip():
        last = None
        continue
    e = json.loads(line)
    if e["type"] == "decision":
        last = t(e["time"])
    elif e["type"] == "snapshot" and last is not None:
        snap.append(t(e["time"]) - last)
    elif e["type"] == "tool_result" and "duration_ms" in e:
        box.append(e["duration_ms"])
print(f"{statistics.median(snap):.1f} {statistics.median(box):.1f} {len(snap)}")'
}
declare -A wall cost
for j in 1 8; do
	rm -rf "$T/runs-$j"
	start=$(date +%s.%N)
	dir=$("$NS" run "$T/m.yaml" -j "$j" --out "$T/runs-$j" 2>"$T/err-$j") || { cat "$T/err-$j"; exit 1; }
	end=$(date +%s.%N)
	wall[$j]=$(echo "$end - $start" | bc -l)
	cost[$j]=$(costs "$dir")
	"$NS" audit "$dir" --verify 2>/dev/null
	[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$dir/run.json")" = succeeded ]
done
printf '8 matrix jobs x %d shell steps, model %ss per turn (%d turns each)\n' "$STEPS" "$DELAY" "$((STEPS + 1))"
for j in 1 8; do
	read -r s b n <<<"${cost[$j]}"
	printf -- '-j %d: wall %6.2f s   per step: snapshot %6.1f ms, sandbox step %6.1f ms (median of %d)\n' "$j" "${wall[$j]}" "$s" "$b" "$n"
done
printf 'ratio -j 8 / -j 1: %.3f (aim <= 0.2)\n' "$(echo "${wall[8]} / ${wall[1]}" | bc -l)"
goal "wall -j 8 / -j 1" "$(printf '%.3f' "$(echo "${wall[8]} / ${wall[1]}" | bc -l)")" x '<=' 0.2
