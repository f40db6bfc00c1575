#!/usr/bin/env bash
# protect: a step and the file tools cannot change what the host trusts next night: the
# manifest and the files it read, .git/config, .git/hooks, .git/info, sandbox.protect. The
# attacks: git log --output=.git/config (fsmonitor runs on the host's next git status), a hook
# planted, the manifest rewritten by write_file and by a redirect, the folder renamed away.
# Commits still work: objects and refs stay writable.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
needuserns protect
if ! command -v git >/dev/null; then
	skip protect "no git"
	done_tests
	exit
fi
ws=$T/ws
mkdir -p "$ws/ci"
git -C "$ws" init -q
git -C "$ws" -c user.name=t -c user.email=t@e commit -q --allow-empty -m init
echo "keep: me" > "$ws/deploy.yml"
pwned=$T/pwned
cat > "$ws/ci/nightly.yaml" <<YAML
version: 1
workspace: ..
sandbox: { protect: [deploy.yml] }
models:
  m:
    provider: scripted
    replies:
      - { tool_calls: [ { name: shell, arguments: { command: "git log -1 --format='[core]%n\\\\tfsmonitor = \"touch $pwned\"' --output=.git/config" } } ] }
      - { tool_calls: [ { name: shell, arguments: { command: "git log -1 --format='#!/bin/sh%ntouch $pwned' --output=.git/hooks/post-checkout" } } ] }
      - { tool_calls: [ { name: shell, arguments: { command: "git log -1 --format=format:x%n --output=.git/info/attributes" } } ] }
      - { tool_calls: [ { name: shell, arguments: { command: "git log -1 --format='format:approval: {default: allow}%n' --output=ci/nightly.yaml" } } ] }
      - { tool_calls: [ { name: shell, arguments: { command: "git log -1 --format=format:pwned%n --output=deploy.yml" } } ] }
      - { tool_calls: [ { name: shell, arguments: { command: "mv .git .git-old" } } ] }
      - { tool_calls: [ { name: shell, arguments: { command: "mv ci ci-old" } } ] }
      - { tool_calls: [ { name: write_file, arguments: { path: ci/nightly.yaml, content: "pwned" } } ] }
      - { tool_calls: [ { name: write_file, arguments: { path: .git/config, content: "[core]\\n\\tfsmonitor = touch $pwned\\n" } } ] }
      - { tool_calls: [ { name: write_file, arguments: { path: .git/hooks/pre-commit, content: "#!/bin/sh\\ntouch $pwned\\n" } } ] }
      - { tool_calls: [ { name: write_file, arguments: { path: deploy.yml, content: "pwned" } } ] }
      - { tool_calls: [ { name: shell, arguments: { command: "git -c user.name=a -c user.email=a@e commit -q --allow-empty -m step" } } ] }
      - { tool_calls: [ { name: final_result, arguments: {} } ] }
workers:
  w:
    model: m
    instructions: x
    tools: [shell, write_file]
    approval:
      default: deny
      rules:
        - { tool: shell, command: "git log *", decision: allow }
        - { tool: shell, command: "git -c * commit *", decision: allow }
        - { tool: shell, command: "mv *", decision: allow }
        - { tool: write_file, path: "**", decision: allow }
jobs:
  j: { worker: w }
YAML
cp "$ws/ci/nightly.yaml" "$T/manifest.orig"
cp "$ws/.git/config" "$T/config.orig"
(cd "$ws" && "$NS" run ci/nightly.yaml --out runs > "$T/out" 2> "$T/err")
expect_rc "the run succeeds" 0 $?
run=$(cat "$T/out"); case $run in /*) ;; *) run=$ws/$run ;; esac
zstd -dcq "$run/jobs/j/events.jsonl.zst" > "$T/ev"
python3 - "$T/ev" > "$T/results" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["type"] == "decision":
        print("decision", e["step"], e["decision"], e.get("reason", ""))
    elif e["type"] == "tool_result":
        print("result", e["step"], e.get("exit_code"), (e.get("stderr") or "").strip()[:200])
PY
check "the manifest is unchanged" cmp -s "$T/manifest.orig" "$ws/ci/nightly.yaml"
check ".git/config is unchanged" cmp -s "$T/config.orig" "$ws/.git/config"
check "no hook planted" test ! -e "$ws/.git/hooks/post-checkout" -a ! -e "$ws/.git/hooks/pre-commit"
check "nothing in .git/info" test ! -e "$ws/.git/info/attributes"
expect_eq "sandbox.protect: deploy.yml unchanged" "keep: me" "$(cat "$ws/deploy.yml")"
check ".git not renamed away" test -d "$ws/.git" -a ! -e "$ws/.git-old"
check "ci/ not renamed away" test -d "$ws/ci" -a ! -e "$ws/ci-old"
for s in 8 9 10 11; do
	expect_grep "write_file step $s refused as protected" "^decision $s deny .* is protected" "$T/results"
done
expect_grep "a commit still works" "^result 12 0 " "$T/results"
expect_eq "and is there" "step" "$(git -C "$ws" log -1 --format=%s)"
(cd "$ws" && git status > /dev/null 2>&1)
check "the host's git status runs nothing planted" test ! -e "$pwned"
[ "$_fail" = 0 ] || cat "$T/results"

# A literal entry missing when the job begins has no mount to hold it: on every backend, a step
# that makes it fails the job, naming it.
for backend in namespace none; do
	mkdir -p "$T/absent-$backend/ws"
	cat > "$T/absent-$backend/m.yaml" <<YAML
version: 1
workspace: ws
models:
  m: { provider: scripted, replies: [ {tool_calls: [ {name: shell, arguments: {command: "mkdir -p ops && echo evil > ops/deploy.sh"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
sandbox: { backend: $backend, network: none, protect: [ops/deploy.sh] }
workers:
  w: { model: m, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w, input: go }
YAML
	"$NS" run "$T/absent-$backend/m.yaml" --out "$T/absent-$backend/runs" >/dev/null 2>"$T/absent-$backend/err"
	expect_rc "$backend: a step that makes a protected path that was not there fails its job" 1 $?
	expect_grep "$backend: naming it" "step 1 made ops/deploy.sh, which sandbox.protect names" "$T/absent-$backend/err"
done
done_tests
