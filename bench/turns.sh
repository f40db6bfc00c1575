#!/usr/bin/env bash
# turns: what the runner itself costs a turn, and whether a long job stays linear, against a
# stateless loopback model that answers at once (tests/longmodel.py, a process of its own, not
# counted). Each turn writes a 20 KB file (write_file: no sandbox, so the figure is the runner's
# turn: request, record, snapshot) in a 128k window; requests run ~100-480 KB between elisions.
#  - CPU per turn (user + system of the runner and every child it waited for, getrusage via wait4)
#    at 100 and at 800 turns, less a 10-turn job's (start-up and end), and 800/100 (flat: within 15 %)
#  - a 5,000-turn job of the same finishes; bytes sent in its second half over its first (linear: 1)
#  - utf8clean on 250 KB of ASCII against malloc+memcpy, the floor, and the byte-by-byte path it
#    replaced
# The jobs run twice when the bench is root: in /tmp as it is, and in an ext4 made fresh for them
# (journaled, mkfs's defaults: what a CI runner's disk is). A job replaces its files each turn,
# and ext4 without a journal (this machine's /tmp) scans every inode deleted in the last minute
# for each file it creates: a cost of the disk's history, not of the runner, that grows with the
# job. The goals are held in both; the long job runs on the fresh one when there is one.
# TURNS_LONG=N runs the long job with N turns instead; QUICK=1 runs only the 100-turn job in /tmp.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
. "$here/lib.sh"
NS=${NIGHTSHIFT:-$root/nightshift}
[ -x "$NS" ] || make -C "$root" -s nightshift >/dev/null
tmp=$(mktemp -d /tmp/ns-bench-turns.XXXXXX)
mp=
fs=""
trap '[ -n "$mp" ] && kill $mp 2>/dev/null; [ -n "$fs" ] && umount "$fs"; [ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"' EXIT
LONG=${TURNS_LONG:-5000}

# job DIR N: runs an N-turn job in DIR/jobN; prints "CPU_SECONDS STATUS TURNS FIRST_HALF_BYTES
# SECOND_HALF_BYTES AVERAGE_BYTES"
job() {
	local n=$2 d="$1/job$2"
	mkdir -p "$d/ws"
	echo "{\"window\": 128000, \"roles\": {\"main\": {\"turns\": $n, \"write\": 20480, \"output\": [40, 200]}}}" > "$d/config.json"
	python3 "$root/tests/longmodel.py" "$d/config.json" "$d/port" "$d/log" & mp=$!
	for _ in $(seq 200); do [ -s "$d/port" ] && break; sleep 0.05; done
	cat > "$d/m.yaml" <<YAML
version: 1
workspace: ws
models:
  default: { provider: openai, base_url: "http://127.0.0.1:$(cat "$d/port")/v1", model: mock-long, retries: 0,
             context_window: 128000, max_output_tokens: 4096 }
workers:
  w: { instructions: "ROLE=main", tools: [write_file], approval: { default: allow }, max_turns: $((n + 10)) }
jobs:
  long: { worker: w, max_turns: $((n + 10)) }
YAML
	python3 - "$NS" "$d" <<'PY'
import json, os, sys
ns, d = sys.argv[1], sys.argv[2]
out = os.open(d + "/dir", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
err = os.open(d + "/err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
pid = os.fork()
if pid == 0:
    os.dup2(out, 1); os.dup2(err, 2)
    os.execv(ns, [ns, "run", d + "/m.yaml", "--out", d + "/runs", "--quiet"])
_, status, ru = os.wait4(pid, 0)
cpu = ru.ru_utime + ru.ru_stime
run = json.load(open(open(d + "/dir").read().strip() + "/run.json"))
log = [json.loads(l) for l in open(d + "/log")]
turns = max(r["turn"] for r in log) + 1
half = turns // 2
first = sum(r["bytes"] for r in log if r["turn"] < half)
second = sum(r["bytes"] for r in log if half <= r["turn"] < 2 * half)
print("%.4f %s %d %d %d %d" % (cpu, run["jobs"]["long"]["status"], run["jobs"]["long"]["turns"], first, second,
                               sum(r["bytes"] for r in log) // len(log)))
PY
	kill $mp 2>/dev/null; wait $mp 2>/dev/null || true; mp=
}

# CPU per turn at N: (CPU of an N-turn job - CPU of a 10-turn one) / (N - 10): the start-up and the
# end (manifest, workspace, sealing the run) are paid once, not per turn.
perturn() { awk -v c="$1" -v t="$2" -v c0="$3" -v t0="$4" 'BEGIN { printf "%.2f", (c - c0) * 1000 / (t - t0) }'; }

# flat DIR LABEL: the 10-, 100- and 800-turn jobs in DIR, their figures beside the goals; leaves
# the 10-turn job's CPU and turns in c10 and t10 for the long job.
flat() {
	local s100 t100 c100 b100 s800 t800 c800 b800 p100 p800
	read -r c10 _ t10 _ _ _ <<<"$(job "$1" 10)"
	read -r c100 s100 t100 _ _ b100 <<<"$(job "$1" 100)"
	[ -n "${QUICK:-}" ] && { echo "100 turns: ${c100}s CPU, $t100 turns, $s100"; exit 0; }
	read -r c800 s800 t800 _ _ b800 <<<"$(job "$1" 800)"
	echo "$2: 100 turns: $s100, $t100 turns, ${c100}s CPU, requests $((b100 / 1024)) KB on average"
	echo "$2: 800 turns: $s800, $t800 turns, ${c800}s CPU, requests $((b800 / 1024)) KB on average"
	echo "$2: 10 turns: ${c10}s CPU (start-up and end, subtracted below)"
	p100=$(perturn "$c100" "$t100" "$c10" "$t10")
	p800=$(perturn "$c800" "$t800" "$c10" "$t10")
	goal "CPU per turn, 100 turns, $2" "$p100" ms '<=' 2
	goal "CPU per turn, 800 turns, $2" "$p800" ms '<=' 2
	goal "CPU per turn, 800 over 100, $2" "$(awk -v a="$p800" -v b="$p100" 'BEGIN { printf "%.2f", a / b }')" x '<=' 1.15
	[ "$s100" = succeeded ] && [ "$s800" = succeeded ] || ok=0
}
ok=1
flat "$tmp" "/tmp"
where=$tmp venue=/tmp
mkdir "$tmp/fs"
if freshext4 "$tmp/fs.img" 1024 "$tmp/fs"; then
	fs=$tmp/fs
	flat "$fs" "fresh ext4"
	where=$fs venue="fresh ext4"
else
	echo "SKIPPED the jobs in a fresh ext4: needs root, mkfs.ext4 and a loop device"
fi

start=$(date +%s.%N)
read -r cl sl tl f1 f2 bl <<<"$(job "$where" "$LONG")"
secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.0f", e - s }')
echo "$venue: $LONG turns: $sl, $tl turns in ${secs}s, ${cl}s CPU, requests $((bl / 1024)) KB on average; bytes sent $f1 in the first half, $f2 in the second"
goal "$LONG-turn job finishes (turns done)" "$tl" turns '>=' "$LONG"
goal "bytes sent, second half over first" "$(awk -v a="$f2" -v b="$f1" 'BEGIN { printf "%.3f", a / b }')" x '<=' 1.15
goal "CPU per turn, $LONG turns, $venue" "$(perturn "$cl" "$tl" "$c10" "$t10")" ms '<=' 2

benchbuild utf8
read -r _ u _ m _ o <<<"$("$tmp/utf8")"
echo "utf8clean on 250 KB of ASCII: ${u} ms; memcpy ${m} ms; byte by byte ${o} ms"
goal "utf8clean over malloc+memcpy (250 KB ASCII)" "$(awk -v a="$u" -v b="$m" 'BEGIN { printf "%.2f", a / b }')" x '<=' 1.5
echo "the byte-by-byte path it replaced: $(awk -v a="$o" -v b="$u" 'BEGIN { printf "%.1f", a / b }')x utf8clean's time"
[ "$ok" = 1 ] && [ "$sl" = succeeded ]
