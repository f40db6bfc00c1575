#!/usr/bin/env bash
# attack11: a run archive handed to `nightshift diff --job` is hostile.
# 1. patchjob reads a decision's step from the text right after "prev":"<64>" (leadstep). A prev
#    of 64 bytes that are not hex may hold a quote and open members of its own: here it opens an
#    object ("args":{"pad":"...) so the "step" after it is nested and the line, valid JSON, has no
#    step of its own. A parse reads no step there; the text read took 3, and the job's patch ran
#    on to the chain's end (a later step's change in it). The same archive with that nested key
#    renamed (which no parse of the line's own members can tell apart) is the reference.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
needuserns attack11
if ! command -v zstd >/dev/null || ! command -v python3 >/dev/null; then
	skip attack11 "zstd and python3 are needed"; done_tests; exit
fi
mkdir -p "$T/ws" && echo base >"$T/ws/f.txt"
cat >"$T/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  s: { provider: scripted, replies: [
    {tool_calls: [ {name: shell, arguments: {command: "echo one > one.txt"}} ]},
    {tool_calls: [ {name: shell, arguments: {command: "echo two > two.txt"}} ]},
    {tool_calls: [ {name: shell, arguments: {command: "echo three > three.txt"}} ]},
    {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: s, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the night" 0 "$rc"; [ "$rc" = 0 ] || cat "$T/err"
# The log cut after step 2's result (seq 10); step 2's decision forged as above.
forge() { # key (step: read by the text; stap: only by a parse), out dir
	rm -rf "$2" && cp -r "$dir" "$2"
	python3 - "$dir/jobs/j/events.jsonl.zst" "$2/jobs/j/events.jsonl.zst" "$1" <<'PY'
import re, subprocess, sys
src, dst, key = sys.argv[1], sys.argv[2], sys.argv[3].encode()
out = []
for l in subprocess.run(["zstd", "-dc", src], capture_output=True, check=True).stdout.split(b"\n"):
    if not l:
        continue
    seq = int(re.match(rb'\{"seq":(\d+),', l).group(1))
    if seq > 10:
        break
    if seq == 8:
        h = b'x","args":{"pad":"'
        h += b"y" * (64 - len(h))
        l2 = re.sub(rb'"prev":"[0-9a-f]{64}","step":2,', b'"prev":"' + h + b'","' + key + b'":3,', l)
        assert l2 != l
        l = l2[:-1] + b"}}"
    out.append(l)
data = b"\n".join(out) + b"\n"
open(dst, "wb").write(subprocess.run(["zstd", "-q", "-c"], input=data, capture_output=True, check=True).stdout)
PY
}
forge step "$T/r1"
forge stap "$T/r2"
expect_eq "the forged line is valid JSON with no step of its own" "None" \
	"$(zstd -dc "$T/r1/jobs/j/events.jsonl.zst" | sed -n 9p | python3 -c 'import json,sys; print(json.loads(sys.stdin.read()).get("step"))')"
"$NS" diff "$T/r1" --job j >"$T/p1" 2>"$T/e1"; rc1=$?
"$NS" diff "$T/r2" --job j >"$T/p2" 2>"$T/e2"; rc2=$?
expect_eq "diff --job: the same exit either way" "$rc2" "$rc1"
check "diff --job: a step nested in a forged prev is not the job's (the same patch as the parse gives)" cmp -s "$T/p1" "$T/p2"
expect_nogrep "and step 3's change is not in it" "three.txt" "$T/p1"
done_tests
