#!/usr/bin/env bash
# hostilerecord: a run's record is a stranger's bytes; reading it stays bounded in time and memory.
# An event log (jobs/j/events.jsonl.zst, then events.jsonl.zst) replaced by a 10 KB zstd stream
# of 1 GiB of 'a' and no newline, SHA256SUMS sealed again: audit, audit --verify, report, replay
# (--continue-live: never the live model) and diff fail with exit 4 naming the file and the 64 MiB cap
# on a line (EVLINEMAX, docs/security.md), within 20 s each and under 256 MiB of peak memory.
# Before, the reader rescanned the partial line after every 128 KiB: 200 MB took audit 10 s (exit
# 0), replay 30 s, their memory growing with the line.
# Then the same job's log as a 60 KB stream of 500 000 calls (one zstd frame of 10 000 calls,
# repeated): report and export --otlp build one document in memory, and grew with the log (2
# million calls in 145 KB took report past 2.8 GB, where it aborted, and export past 2.9 GB, where
# it crashed). Now the page stops at 64 MiB of events and the spans at 96 MiB, each saying so.
source "$(dirname "$0")/lib.sh"
# Under SANITIZE=1, ASan's quarantine (256 MiB by default) keeps freed buffers and would count
# in the peak as the program's own.
export ASAN_OPTIONS=detect_leaks=0:quarantine_size_mb=32
BOUND=$((256 * 1024)) # KiB
asan && BOUND=$((2 * BOUND)) # ASan's quarantine keeps what was freed: the plain build holds 256 MiB
if ! command -v python3 >/dev/null || ! command -v zstd >/dev/null; then
	skip "hostile records" "python3 and zstd are needed"
	done_tests
	exit
fi
# Past ASan (whose shadow memory needs terabytes of address space), a ceiling on address space:
# a reader that keeps what it reads fails fast instead of taking the machine's memory.
nm "$NS" 2>/dev/null | grep -q __asan_ || ulimit -v $((2 * 1024 * 1024))

mkdir -p "$T/ws"
cat >"$T/m.yaml" <<'YAML'
version: 1
workspace: ws
sandbox: { backend: none }
models: { d: { provider: scripted, replies: [ { tool_calls: [ { name: final_result, arguments: {} } ] } ] } }
workers:
  w: { model: d, instructions: x }
jobs:
  j: { worker: w }
YAML
"$NS" run "$T/m.yaml" --out "$T/runs" >"$T/run.out" 2>"$T/run.err"
expect_rc "a run to start from" 0 $?
RUN=$(cat "$T/run.out")

# A zstd frame of 1 GiB of 'a': 8192 RLE blocks of 128 KiB, no newline.
python3 - "$T/line.zst" <<'PY'
import struct, sys
blocks = 8192
out = bytearray(b"\x28\xb5\x2f\xfd\x00\x38")  # magic; no content size; window 128 KiB
for i in range(blocks):
    h = (1 if i == blocks - 1 else 0) | 1 << 1 | (128 << 10) << 3  # last?, RLE, size
    out += struct.pack("<I", h)[:3] + b"a"
open(sys.argv[1], "wb").write(out)
PY

# hostile NAME LOG: a copy of the run whose LOG is the 1 GiB line, SHA256SUMS sealed again.
hostile() {
	cp -r "$RUN" "$T/$1"
	cp "$T/line.zst" "$T/$1/$2"
	(cd "$T/$1" && find . -type f ! -name SHA256SUMS | sed 's|^./||' | sort | xargs sha256sum >SHA256SUMS)
}

# refused NAME WANT-RC PATTERN CMD...: CMD exits WANT-RC within 20 s, says PATTERN on stdout or
# stderr, and its peak memory stays under BOUND. (Each reads the log up to the cap: about 1 s.)
refused() {
	local name=$1 want=$2 pat=$3; shift 3
	timeout -s KILL 20 python3 "$ROOT/tests/peakrss.py" "$T/$name.rss" "$NS" "$@" >"$T/$name.out" 2>&1
	local rc=$?
	[ "$rc" = 137 ] && echo "FAIL $name: still running after 20 s"
	expect_rc "$name: exit" "$want" "$rc"
	expect_grep "$name: names the file and the cap" "$pat" "$T/$name.out"
	check "$name: peak memory $(cat "$T/$name.rss" 2>/dev/null) KiB, under $BOUND" \
		test "$(cat "$T/$name.rss" 2>/dev/null || echo $BOUND)" -lt $BOUND
}

LINE='jobs/j/events.jsonl.zst: a line longer than 64 MiB'
hostile job jobs/j/events.jsonl.zst
refused audit 4 "$LINE" audit "$T/job"
refused verify 4 "$LINE" audit "$T/job" --verify
refused report 4 "$LINE" report "$T/job" --out "$T/job.html"
# An unreadable record is no record that ran out of replies: the live model is not asked.
refused replay 4 "$LINE" replay "$T/job" --out "$T/replays" --quiet --continue-live --manifest "$T/m.yaml"
expect_nogrep "replay: the live model did not answer" 'live model|succeeded' "$T/replay.out"
refused diff 4 "$LINE" diff "$T/job" --step end
refused diffjob 4 "$LINE" diff "$T/job" --job j

hostile runlog events.jsonl.zst
refused runverify 4 '^events.jsonl.zst:1: .*events.jsonl.zst: a line longer than 64 MiB' audit "$T/runlog" --verify

# Many calls in few bytes: the job's log is its own first line, then frames of 10 000 calls each.
python3 - "$RUN/jobs/j/events.jsonl.zst" "$T/calls.zst" <<'PY'
import json, subprocess, sys
first = subprocess.run(["zstd", "-dcq", sys.argv[1]], capture_output=True, check=True).stdout.split(b"\n")[0]
z = lambda b: subprocess.run(["zstd", "-q", "-19", "-c"], input=b, capture_output=True, check=True).stdout
call = (json.dumps({"seq": 1, "time": "2026-11-22T02:00:00.000Z", "type": "decision", "prev": "0" * 64, "step": 1,
                    "call_id": "c", "tool": "shell", "arguments": {"command": "echo " + "x" * 300},
                    "decision": "allow", "rule": 1, "reason": "rule 1 allows it"}) + "\n" +
        json.dumps({"seq": 2, "time": "2026-11-22T02:00:01.000Z", "type": "tool_result", "prev": "0" * 64, "step": 1,
                    "call_id": "c", "tool": "shell", "exit_code": 0, "stdout": "y" * 400}) + "\n").encode()
frame = z(call * 10000)
open(sys.argv[2], "wb").write(z(first + b"\n") + frame * 50)
PY
cp -r "$RUN" "$T/calls"
cp "$T/calls.zst" "$T/calls/jobs/j/events.jsonl.zst"
(cd "$T/calls" && find . -type f ! -name SHA256SUMS | sed 's|^./||' | sort | xargs sha256sum >SHA256SUMS)
echo "note: $(stat -c %s "$T/calls.zst") bytes of log, $(zstd -dcq "$T/calls.zst" | wc -c) decompressed"
refused report-calls 0 'WARNING: the page stops where it holds 64 MiB' report "$T/calls" --out "$T/calls.html"
expect_grep "report-calls: the page says where it stops" 'the page stops here' "$T/calls.html"
expect_grep "report-calls: the page is whole" '</html>' "$T/calls.html"
refused export-calls 0 'WARNING: the spans passed 96 MiB' export "$T/calls" --otlp "$T/calls.otlp"
check "export-calls: the traces parse and say they were cut" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
spans = d["resourceSpans"][0]["scopeSpans"][0]["spans"]
assert 1000 < len(spans) < 500000, len(spans)
assert any(a["key"] == "nightshift.export.truncated" for a in spans[0]["attributes"])' "$T/calls.otlp"
done_tests
