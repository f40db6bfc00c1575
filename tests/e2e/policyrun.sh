#!/usr/bin/env bash
# policyrun: `policy MANIFEST --run RUN` decides a night's recorded calls again under MANIFEST's
# rules, runs nothing, and lists the calls whose decision would change. A rule removed lists
# exactly the calls it allowed; the same manifest lists none; a rule added lists the calls it
# now allows; a delegate's calls are judged by the delegate's worker.
source "$(dirname "$0")/lib.sh"

mkdir -p "$T/ws"
printf 'a\nb\n' >"$T/ws/notes.txt"
night() {  # night FILE WC_RULE_LINE
	cat >"$1" <<YAML
version: 1
workspace: ws
sandbox: { backend: none }
models:
  d:
    provider: scripted
    replies:
      - tool_calls:
          - { name: read_file, arguments: { path: notes.txt } }
          - { name: shell, arguments: { command: "wc -l notes.txt" } }
          - { name: shell, arguments: { command: "cat notes.txt" } }
          - { name: shell, arguments: { command: "wc -c notes.txt" } }
          - { name: shell, arguments: { command: "ls" } }
          - { name: helper, arguments: { input: "count" } }
      - tool_calls:
          - { name: final_result, arguments: {} }
  h: { provider: scripted, replies: [ {tool_calls: [ {name: shell, arguments: {command: "wc -w notes.txt"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w:
    model: d
    instructions: x
    tools: [shell, read_file]
    delegates: [helper]
    approval:
      default: deny
      rules:
        - { tool: read_file, decision: allow }
$2
        - { tool: shell, command: "cat *", decision: allow }
        - { tool: helper, decision: allow }
  helper:
    model: h
    instructions: y
    tools: [shell]
    approval:
      default: deny
      rules:
        - { tool: shell, command: "true", decision: allow }
$2
jobs:
  j: { worker: w }
YAML
}
wc='        - { tool: shell, command: "wc *", decision: allow }'
night "$T/m.yaml" "$wc"
run=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the night runs" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"

"$NS" policy "$T/m.yaml" --run "$run" >"$T/out" 2>"$T/err"; rc=$?
expect_rc "the same manifest: exit 0" 0 "$rc"
expect_eq "the same manifest lists none" "" "$(cat "$T/out")"
expect_grep "the count says every call was decided again" "7 recorded calls decided again, 0 would be decided otherwise" "$T/err"

night "$T/less.yaml" ""
"$NS" policy "$T/less.yaml" --run "$run" >"$T/out" 2>"$T/err"; rc=$?
expect_rc "a rule removed: exit 0" 0 "$rc"
expect_eq "a rule removed lists exactly the calls it allowed" \
"job j, step 2: shell wc -l notes.txt: allow by rule 2 -> deny by default
job j, step 4: shell wc -c notes.txt: allow by rule 2 -> deny by default
job j.helper-6, step 7: shell wc -w notes.txt: allow by rule 2 -> deny by default" "$(cat "$T/out")"
"$NS" policy "$T/less.yaml" --run "$run" --json >"$T/json" 2>/dev/null
expect_eq "--json: one object per changed call" 3 "$(wc -l <"$T/json")"
expect_eq "--json: old and new decision and rule" "allow 2 deny default wc -l notes.txt" \
	"$(head -n1 "$T/json" | python3 -c 'import json,sys; o=json.load(sys.stdin); print(o["old"]["decision"], o["old"]["rule"], o["new"]["decision"], o["new"]["rule"], o["arguments"]["command"])')"

night "$T/more.yaml" "$wc
        - { tool: shell, command: \"ls\", decision: allow }"
"$NS" policy "$T/more.yaml" --run "$run" >"$T/out" 2>"$T/err"
expect_eq "a rule added lists the call it now allows" "job j, step 5: shell ls: deny by default -> allow by rule 3" "$(cat "$T/out")"
tar --zstd -cf "$T/night.tar.zst" -C "$(dirname "$run")" "$(basename "$run")"
"$NS" policy "$T/less.yaml" --run "$T/night.tar.zst" >"$T/out2" 2>/dev/null
expect_eq "a run archive is read as the run" 3 "$(wc -l <"$T/out2")"
"$NS" policy "$T/m.yaml" --run "$run" --worker w 2>"$T/err"; rc=$?
expect_rc "--run with a call of one's own: usage error" 2 "$rc"
"$NS" policy "$T/m.yaml" --run "$T/nowhere" 2>"$T/err"; rc=$?
expect_rc "a missing run: usage error" 2 "$rc"
check "nothing ran: the workspace is as it was" test "$(cat "$T/ws/notes.txt")" = "$(printf 'a\nb\n')"
done_tests
