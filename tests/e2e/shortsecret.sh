#!/usr/bin/env bash
# shortsecret: a secret too short to mask (fewer than 4 bytes, a test key such as `k`) is not
# masked, and the run says so by name: masking it rewrote every `k` of the record (run.json's
# "skipped" read "s[secret:K]ipped", which resume and report then misread). One of 4 bytes or more
# is masked as before, in the same run.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
command -v zstd >/dev/null || { skip shortsecret "zstd is not installed"; done_tests; exit; }
mkdir -p "$T/ws"
echo "kept" > "$T/ws/notes.txt"
cat > "$T/script.yaml" <<'S'
- tool_calls: [{ name: read_file, arguments: { path: notes.txt } }]
- tool_calls: [{ name: final_result, arguments: { note: "looked at notes.txt: kept, and a pin 4711 in it" } }]
S
cat > "$T/m.yaml" <<'M'
version: 1
workspace: ws
secrets: [NS_SHORT, NS_PIN]
models: { default: { provider: scripted, script: script.yaml } }
sandbox: { backend: none }
workers:
  w:
    instructions: look at the workspace, keep it
    tools: [read_file]
    approval: { default: allow }
    output: { type: object, properties: { note: { type: string } }, required: [note] }
jobs:
  look: { worker: w }
  bad: { worker: w, max_turns: 1 }
  skipme: { worker: w, needs: [bad] }
M
NS_SHORT=k NS_PIN=4711 "$NS" run "$T/m.yaml" --out "$T/runs" > "$T/out" 2> "$T/err"
expect_rc "the run ends with a job failed" 1 $?
run=$(cat "$T/out")
expect_grep "the short secret is named on stderr" "NS_SHORT.*(too short|fewer than 4)" "$T/err"
expect_nogrep "the 4-byte one is not" "warning: NS_PIN" "$T/err"
{ find "$run" -name '*.zst' -not -path '*/snapshots/*' -exec zstd -dcq {} \;; find "$run" -name '*.json' -exec cat {} +; } > "$T/all"
expect_nogrep "no record rewritten around the short secret" "secret:NS_SHORT" "$T/all"
expect_grep "the 4-byte secret is masked" "secret:NS_PIN" "$T/all"
expect_nogrep "the 4-byte secret is not in the record" "4711" "$T/all"
check "run.json reads: the skipped job is skipped" python3 -c "
import json, sys
r = json.load(open('$run/run.json'))
sys.exit(0 if r['jobs']['skipme']['status'] == 'skipped' and r['jobs']['look']['status'] == 'succeeded' and r['jobs']['bad']['status'] == 'failed' else 1)"
expect_rc "audit --verify holds the run" 0 "$("$NS" audit "$run" --verify >/dev/null 2>&1; echo $?)"
done_tests
