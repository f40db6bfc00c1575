#!/usr/bin/env bash
# decide: `nightshift policy` and a run decide every call alike (policy/decide.h, one decide for
# both). A table of calls (tool, arguments, decision, rule), protected paths, the runs folder, a
# hard-linked file, a tool the worker is not given and network commands among them, is asked of
# `policy --json` and made by a scripted model in a real run; both must give the table's answer.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
for p in git python3 zstd; do
	if ! command -v $p >/dev/null; then
		skip decide "no $p"
		done_tests
		exit
	fi
done
ws=$T/ws
mkdir -p "$ws/reports" "$ws/keys"
git -C "$ws" init -q
echo "keep" >"$ws/deploy.yml"
echo "readme" >"$ws/README"
echo "outside" >"$T/outside.txt"
ln "$T/outside.txt" "$ws/linked.txt"
# tool | arguments | decision | rule (from 1, or default)
cat >"$T/table" <<'TABLE'
shell|{"command":"git log -1"}|allow|1
shell|{"command":"git log -1; rm -rf reports"}|deny|2
shell|{"command":"git log -1; touch reports/x"}|deny|default
write_file|{"path":"reports/a.md","content":"x"}|allow|3
write_file|{"path":"/workspace/reports/b.md","content":"x"}|allow|3
write_file|{"path":".git/hooks/pre-commit","content":"#!/bin/sh"}|deny|default
write_file|{"path":"./.git//config","content":"x"}|deny|default
write_file|{"path":".git/info/attributes","content":"x"}|deny|default
write_file|{"path":"m.yaml","content":"approval: {}"}|deny|default
write_file|{"path":"deploy.yml","content":"x"}|deny|default
write_file|{"path":"keys/a.pem","content":"x"}|deny|default
write_file|{"path":"linked.txt","content":"x"}|deny|default
write_file|{"path":"runs/x","content":"x"}|deny|default
read_file|{"path":"runs"}|deny|default
read_file|{"path":"README"}|allow|4
read_file|{"path":"../outside.txt"}|deny|default
edit_file|{"path":".git/config","old":"a","new":"b"}|deny|default
edit_file|{"path":"README","old":"readme","new":"x"}|allow|7
list_dir|{"path":"."}|deny|default
shell|{"command":"curl -s --max-time 5 http://127.0.0.1:9/"}|allow|5
shell|{"command":"curl -s -o .git/hooks/post-checkout http://127.0.0.1:9/"}|deny|default
shell|{"command":"cat </dev/tcp/127.0.0.1/9"}|deny|default
shell|{"command":"true && wget -q http://127.0.0.1:9/"}|abort|6
TABLE
python3 - "$T/table" >"$ws/m.yaml" <<'PY'
import json, sys
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[1]) if l.strip()]
replies = [{"tool_calls": [{"name": t, "arguments": json.loads(a)}]} for t, a, _, _ in rows]
replies.append({"tool_calls": [{"name": "final_result", "arguments": {}}]})
print("""version: 1
name: decide
workspace: .
sandbox: { backend: none, protect: [deploy.yml, "keys/*.pem"] }
models:
  m: { provider: scripted, replies: %s }
workers:
  w:
    model: m
    instructions: x
    tools: [shell, read_file, write_file, edit_file]
    approval:
      default: deny
      rules:
        - { tool: shell, command: "git log *", decision: allow }
        - { tool: shell, command: "rm *", decision: deny }
        - { tool: write_file, path: "**", decision: allow }
        - { tool: read_file, decision: allow }
        - { tool: shell, command: "curl *", decision: allow }
        - { tool: shell, command: "wget *", decision: abort }
        - { tool: edit_file, decision: allow }
        - { tool: shell, command: "true", decision: allow }
jobs:
  j: { worker: w }""" % json.dumps(replies))
PY

# the policy command, one row at a time
python3 - "$T/table" >"$T/args" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    t, a, _, _ = l.rstrip("\n").split("|")
    a = json.loads(a)
    flag = "--command" if t == "shell" else "--path"
    print(t, flag, a["command"] if t == "shell" else a["path"], sep="\t")
PY
: >"$T/policy"
while IFS=$'\t' read -r tool flag val; do
	"$NS" policy "$ws/m.yaml" --worker w --tool "$tool" "$flag" "$val" --json 2>>"$T/policyerr" |
		python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["decision"], d["rule"], d["reason"])' >>"$T/policy"
done <"$T/args"

# the run
(cd "$ws" && "$NS" run m.yaml >"$T/out" 2>"$T/err")
expect_rc "the run ends aborted by the last row" 3 $?
run=$(cat "$T/out"); case $run in /*) ;; *) run=$ws/$run ;; esac
zstd -dcq "$run/jobs/j/events.jsonl.zst" | python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e["type"] == "decision":
        print(e["decision"], e["rule"], e["reason"])' >"$T/run"

n=$(grep -c . "$T/table")
expect_eq "policy decided every row" "$n" "$(grep -c . "$T/policy")"
expect_eq "the run decided every row" "$n" "$(grep -c . "$T/run")"
i=0
while IFS='|' read -r tool args dec rule; do
	i=$((i + 1))
	expect_eq "row $i policy: $tool $args" "$dec $rule" "$(sed -n "${i}p" "$T/policy" | cut -d' ' -f1-2)"
	expect_eq "row $i run: $tool $args" "$dec $rule" "$(sed -n "${i}p" "$T/run" | cut -d' ' -f1-2)"
	expect_eq "row $i same reason" "$(sed -n "${i}p" "$T/policy")" "$(sed -n "${i}p" "$T/run")"
done <"$T/table"
expect_grep "the hook is refused as protected" '^deny default \.git/hooks/pre-commit is protected' "$T/policy"
expect_grep "the runs folder is named" '^deny default runs holds the run directories' "$T/policy"
expect_grep "the hard link is named" '^deny default linked.txt is protected \(it has hard links' "$T/policy"
check "nothing protected was written" test ! -e "$ws/.git/hooks/pre-commit" -a "$(cat "$ws/deploy.yml")" = keep
expect_eq "the outside file is unchanged" "outside" "$(cat "$T/outside.txt")"

# `policy` changes nothing: no .git/hooks made for it
ws2=$T/ws2
mkdir -p "$ws2/.git"
cp "$ws/m.yaml" "$ws2/m.yaml"
"$NS" policy "$ws2/m.yaml" --worker w --tool write_file --path .git/hooks/x >"$T/o2" 2>/dev/null
expect_eq "policy in a fresh repository" "deny by default" "$(cat "$T/o2")"
check "and made no .git/hooks" test ! -e "$ws2/.git/hooks"
done_tests
