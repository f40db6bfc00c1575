#!/usr/bin/env bash
# secretforms: a secret a step prints is masked whatever form it takes on the way: raw, as
# cleaned text (it holds invalid UTF-8), escaped for JSON by a program (\u00e4, a surrogate pair,
# Python's \udcff for a bad byte), escaped once more inside a record, with its newline as CRLF.
# Nowhere: not in the requests the model provider gets, the events, run.json, stderr.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
command -v zstd >/dev/null || { skip secretforms "zstd is not installed"; done_tests; exit; }
backend=none
userns && backend=namespace
mkdir -p "$T/ws"
export NS_A=$'Qx7-Geheimnis-\xc3\xa4-\xf0\x9f\x94\x91-Wert\nZweite-Zeile-77'
export NS_B=$'Rk4-binaer-\xff\xfe-Kennwort-Ende'
calls='[["shell", {"command": "printf %s \"$NS_A\"; echo; printf %s \"$NS_B\"; echo"}]]'
py='import json,os; a=os.environ[\"NS_A\"]; b=os.environ[\"NS_B\"]; print(json.dumps(a)); print(json.dumps(b)); print(json.dumps(json.dumps(a))); print(a.replace(chr(10), chr(13)+chr(10)))'
# A result cut to tool_output_limit keeps its tail: a tail that starts inside a secret (the model
# chooses where) must not show the secret's end.
export NS_C=Aa1Bb2Cc3Dd4Ee5Ff6Gg7Hh8Ii9Jj0KkLlMmNnOoPpQq
clips=""
for k in 581 587 593 599 605; do # the tail (3/5 of 1 KiB: 615 bytes) starts 10 to 34 bytes in
	clips="$clips{\"openai_calls\": [[\"shell\", {\"command\": \"printf %05000d 0; printf %s \\\"\$NS_C\\\"; printf %0${k}d 0\"}]]},"
done
cat > "$T/script.json" <<JSON
{"by_turn": [
  {"openai_calls": $calls},
  {"openai_calls": [["shell", {"command": "python3 -c '$py'"}]]},
  $clips
  {"openai_calls": [["shell", {"command": "printf 'key=%s\\\\n' \\"\$NS_C\\" > leaked.conf"}]]},
  {"openai_calls": [["shell", {"command": "printf '%s\\\\n' \\"\$NS_A\\" > key.pem; cat -n key.pem; sed 's/^/> /' key.pem"}]]},
  {"openai_calls": [["final_result", {}]]}
]}
JSON
python3 "$ROOT/tests/mockmodel.py" "$T/script.json" "$T/port" "$T/mock.log" & mp=$!
waitfor 60 test -s "$T/port"
port=$(cat "$T/port")
cat > "$T/m.yaml" <<YAML
version: 1
workspace: ws
secrets: [NS_A, NS_B, NS_C]
sandbox: { backend: $backend, env: [NS_A, NS_B, NS_C] }
models:
  default: { provider: openai, base_url: "http://127.0.0.1:$port/v1", model: m }
workers:
  w: { instructions: x, tools: [shell], approval: { default: allow }, tool_output_limit: 1k }
jobs:
  j: { worker: w }
YAML
OPENAI_API_KEY=k "$NS" run "$T/m.yaml" --out "$T/runs" > "$T/out" 2> "$T/err"
expect_rc "the run succeeds" 0 $?
kill $mp 2>/dev/null
run=$(cat "$T/out")
expect_grep "the model got the step's output" 'Zweite|secret:NS_A' "$T/mock.log"
# (the layers keep files byte for byte: a secret a step wrote into one is in its layer)
{ for f in $(find "$run" -name '*.zst' -not -path '*/snapshots/*'); do zstd -dcq "$f"; done; find "$run" -name '*.json' -exec cat {} +; cat "$run"/jobs/j/changes.patch; cat "$T/err"; } > "$T/all"
for where in mock.log all; do
	for piece in Geheimnis Zweite-Zeile Kennwort-Ende binaer Ii9Jj0 OoPpQq; do
		expect_nogrep "$where: no '$piece'" "$piece" "$T/$where"
	done
done
check "the step wrote the secret into a file" grep -q "key=$NS_C" "$T/ws/leaked.conf"
expect_grep "changes.patch holds it masked" '^\+key=\[secret:NS_C\]' "$run/jobs/j/changes.patch"
expect_grep "and says so" 'holds a secret: masked in changes.patch' "$T/err"
check "the cut outputs reached the model" grep -q 'bytes.*cut' "$T/mock.log"
# No digest of a secret's bytes in the record: a guess could be confirmed with it.
raw=$(printf '%s\n%s\n' "$NS_A" "$NS_B" | sha256sum | cut -c1-64)
expect_nogrep "no digest of the unmasked output" "$raw" "$T/all"
expect_grep "the events name the secrets" 'secret:NS_A' "$T/all"
expect_grep "the invalid-UTF-8 one too" 'secret:NS_B' "$T/all"
# A cut that takes a secret's head: the sandbox keeps a stream's last 512 KiB, and here they begin
# 10 bytes into the secret; what is left of it (its tail) is masked too.
export NS_T=ghp_AAAAAAAAAAQQQQQQQQQQzzzzzzzzzz0123456789xyz
mkdir -p "$T/tail/ws"
cat > "$T/tail/m.yaml" <<'YAML'
version: 1
workspace: ws
secrets: [NS_T]
sandbox: { env: [NS_T] }
models:
  d: { provider: scripted, context_window: 2000000, replies: [ {tool_calls: [ {name: shell, arguments: {command: "head -c 600000 /dev/zero | tr '\\0' a; printf %s \"$NS_T\"; head -c 524254 /dev/zero | tr '\\0' b; printf '\\000bin=%s\\n' \"$NS_T\" > b.bin; printf 'text=%s\\n' \"$NS_T\" > a.txt"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: d, instructions: x, tools: [shell], approval: { default: allow }, tool_output_limit: 1M }
jobs:
  j: { worker: w }
YAML
trun=$("$NS" run "$T/tail/m.yaml" --out "$T/tail/runs" 2>"$T/tail/err")
zstd -dcq "$trun/jobs/j/events.jsonl.zst" > "$T/tail/events"
expect_nogrep "a secret's tail after the sandbox's cut is not in the record" "QQQQQQQQzzzzzzzzzz0123456789xyz" "$T/tail/events"
check "it is masked there" grep -q 'not kept by the sandbox.*secret:NS_T' "$T/tail/events"
# A secret in a binary file: changes.patch carries it masked (no zlib literal of it), and the
# index lines are ids of what the patch carries, not of the secret's bytes.
mkdir -p "$T/tail/apply" && (cd "$T/tail/apply" && git init -q . && git apply "$trun/jobs/j/changes.patch")
check "the patch applies" test -f "$T/tail/apply/b.bin"
expect_nogrep "the applied binary file holds no secret" "$NS_T" "$T/tail/apply/b.bin"
expect_nogrep "nor the text file" "$NS_T" "$T/tail/apply/a.txt"
unmasked=$(printf 'text=%s\n' "$NS_T" | git hash-object --stdin)
expect_nogrep "no index line is the blob id of the unmasked file" "$unmasked" "$trun/jobs/j/changes.patch"
expect_grep "and it says so" 'holds a secret: masked in changes.patch' "$T/tail/err"
done_tests
