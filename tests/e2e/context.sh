#!/usr/bin/env bash
# What reaches the model: tool output cut to tool_output_limit (head and tail, the cut said), how a
# step ended always said (exit code, signal, the time limit), the events keeping the full size and
# digest.
source "$(dirname "$0")/lib.sh"
mkdir -p "$T/ws"
# msgs JOB: the tool messages the model was sent, one JSON object per line.
msgs() { zstd -dcq "$dir/jobs/$1/events.jsonl.zst" | python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l)
    for m in e.get("messages", []):
        if m.get("role") == "tool": print(json.dumps(m))'; }
ev() { zstd -dcq "$dir/jobs/$1/events.jsonl.zst"; }

cat > "$T/m.yaml" <<'YAML'
version: 1
workspace: ws
sandbox: { timeout: 2s }
models:
  m:
    provider: scripted
    replies:
      - tool_calls: [ {name: shell, arguments: {command: "seq 1 200000; echo LAST-LINE-OF-LOG >&2; exit 3"}} ]
      - tool_calls: [ {name: shell, arguments: {command: "seq 1 100; echo started; sleep 60"}} ]
      - tool_calls: [ {name: shell, arguments: {command: "echo bye; kill -SEGV $$; echo never"}} ]
      - tool_calls: [ {name: read_file, arguments: {path: big.txt}} ]
      - tool_calls: [ {name: final_result, arguments: {}} ]
workers:
  w: { model: m, instructions: x, tools: [shell, read_file], approval: { default: allow }, tool_output_limit: 8k }
jobs:
  j: { worker: w }
  k: { worker: w, tool_output_limit: 2k }
YAML
python3 -c 'import sys; sys.stdout.write("".join("line %06d of the big file\n" % i for i in range(20000)))' > "$T/ws/big.txt"
dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the job runs" 0 "$rc"
msgs j > "$T/j.tool"
msgs k > "$T/k.tool"
q() { python3 -c '
import json, sys
t = [json.loads(l) for l in open(sys.argv[1])]
print(eval(sys.argv[2]))' "$1" "$2"; }
expect_eq "four tool results" 4 "$(q "$T/j.tool" 'len(t)')"
expect_eq "each within the limit (8k and a note)" True "$(q "$T/j.tool" 'all(len(m["content"].encode()) <= 8192 + 300 for m in t)')"
expect_eq "each within 2k for the job that sets it" True "$(q "$T/k.tool" 'all(len(m["content"].encode()) <= 2048 + 300 for m in t)')"
expect_eq "the exit code first" "exit code 3" "$(q "$T/j.tool" 't[0]["content"].splitlines()[0]')"
expect_eq "the head of stdout kept" True "$(q "$T/j.tool" '"stdout:\n1\n2\n3\n" in t[0]["content"]')"
expect_eq "the tail of stdout kept" True "$(q "$T/j.tool" '"199999\n200000\n" in t[0]["content"]')"
expect_eq "stderr's last line kept" True "$(q "$T/j.tool" '"LAST-LINE-OF-LOG" in t[0]["content"]')"
expect_eq "the cut said in bytes and lines" True "$(q "$T/j.tool" '__import__("re").search(r"\[\.\.\. \d+ bytes \(\d+ lines\) cut here, of \d+;", t[0]["content"]) is not None')"
expect_eq "the sandbox kept the tail past its cap, and says so" True "$(q "$T/j.tool" '"(the step printed more than the sandbox keeps" in t[0]["content"]')"
expect_eq "the exit code said again below the output" True "$(q "$T/j.tool" 't[0]["content"].rstrip().endswith("exit code 3")')"
expect_eq "a timeout names the step's limit" True "$(q "$T/j.tool" 't[1]["content"].startswith("the command ran past the step\x27s time limit (2s)")')"
expect_eq "with what the step printed before" True "$(q "$T/j.tool" '"100\nstarted" in t[1]["content"]')"
expect_eq "a signal is named" True "$(q "$T/j.tool" 't[2]["content"].startswith("killed by signal 11 (SIGSEGV)") and "bye" in t[2]["content"]')"
expect_eq "read_file: head and tail of the file" True "$(q "$T/j.tool" '"line 000000" in t[3]["content"] and "line 019999" in t[3]["content"] and "cut here" in t[3]["content"]')"
ev j > "$T/j.ev"
expect_eq "the event keeps the full size of stdout" True "$(python3 -c '
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
r = [e for e in r if e["type"] == "tool_result"]
print(r[0]["stdout_bytes"] > 1000000 and len(r[0]["stdout_sha256"]) == 64 and r[3]["output_bytes"] > 500000)' "$T/j.ev")"
check "the run verifies" "$NS" audit "$dir" --verify

# Bad limits are refused before anything runs.
sed -i 's/tool_output_limit: 2k/tool_output_limit: 10/' "$T/m.yaml"
"$NS" validate "$T/m.yaml" 2>"$T/err"; rc=$?
expect_rc "a limit below 1k is refused" 2 "$rc"
expect_grep "naming the place" "m.yaml:[0-9]+:[0-9]+: tool_output_limit must be between 1k and 16M" "$T/err"
done_tests
