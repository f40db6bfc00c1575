#!/usr/bin/env bash
# skills: Agent Skills folders (SKILL.md) named by a worker: their names and descriptions reach
# the system prompt, the folder is read-only at /skills/NAME in the sandbox; bad folders fail
# validate with file:line:col. Claude Code agent files (.claude/agents/*.md) as worker files:
# tools mapped, unknown ones an error at their column.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
P=$T/proj
mkdir -p "$P/ws" "$P/skills/changelog" "$P/.claude/agents"
cat > "$P/skills/changelog/SKILL.md" <<'MD'
---
name: changelog
description: Writes a changelog entry from the day's commits. Use when asked for release notes.
license: MIT
---
# Changelog
Group the commits by kind: SKILL-BODY-MARKER.
MD
echo "template" > "$P/skills/changelog/template.md"
cat > "$P/.claude/agents/reviewer.md" <<'MD'
---
name: reviewer
description: Reviews code
tools: Read, Grep, Bash
model: inherit
color: blue
---
You review the code. CLAUDE-BODY-MARKER
MD
cat > "$P/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  default:
    provider: scripted
    replies:
      - tool_calls:
          - { name: shell, arguments: { command: "cat /skills/changelog/SKILL.md" } }
          - { name: shell, arguments: { command: "ls /skills/changelog" } }
          - { name: shell, arguments: { command: "touch /skills/changelog/evil" } }
      - tool_calls: [{ name: final_result, arguments: {} }]
sandbox: { backend: namespace }
workers:
  writer:
    instructions: Write the changelog.
    tools: [shell]
    skills: [skills/changelog]
    approval: { default: allow }
  reviewer:
    file: .claude/agents/reviewer.md
    approval: { default: allow }
jobs:
  w: { worker: writer, input: go }
  r: { worker: reviewer, input: go }
YAML
if ! userns; then
	skip skills-run "user namespaces are not available here, the namespace sandbox cannot run"
else
	run=$("$NS" run "$P/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
	expect_rc "the run succeeds" 0 "$rc"
	[ "$rc" = 0 ] || cat "$T/err"
	zstd -dc "$run/jobs/w/events.jsonl.zst" > "$T/w.jsonl"
	expect_grep "the skill's name and description are in the system prompt" '"system":"Write the changelog\.[^"]*- changelog: Writes a changelog entry' "$T/w.jsonl"
	expect_nogrep "the skill's body is not (the model reads it when needed)" '"system":"[^"]*SKILL-BODY-MARKER' "$T/w.jsonl"
	expect_grep "the model can read SKILL.md at /skills/NAME" '"stdout":"---\\nname: changelog.*SKILL-BODY-MARKER' "$T/w.jsonl"
	expect_grep "and the folder's other files" '"stdout":"SKILL.md\\ntemplate.md' "$T/w.jsonl"
	expect_grep "the folder is read-only" '"stderr":"touch: cannot touch .*Read-only file system' "$T/w.jsonl"
	check "nothing was written into the skill folder" test ! -e "$P/skills/changelog/evil"
	zstd -dc "$run/jobs/r/events.jsonl.zst" > "$T/r.jsonl"
	python3 - "$T/r.jsonl" > "$T/rtools" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["type"] == "model_request" and "tools" in e:
        print(" ".join(t["name"] for t in e["tools"])); print(e["system"][:200]); break
PY
	expect_grep "Claude Code tools Read, Grep, Bash are read_file and shell" "^shell read_file final_result$" "$T/rtools"
	expect_grep "the agent file's body is the instructions" "^You review the code. CLAUDE-BODY-MARKER" "$T/rtools"
fi

# validate: each mistake with its file:line:col
bad() {  # NAME WANT: validate must exit 2 and print WANT
	local out; out=$("$NS" validate "$P/m.yaml" 2>&1); local rc=$?
	expect_rc "$1: exit 2" 2 "$rc"
	case "$out" in *"$2"*) _pass=$((_pass + 1)) ;; *) _fail=$((_fail + 1)); printf 'FAIL %s:\n  want: %s\n  got:  %s\n' "$1" "$2" "$out" ;; esac
}
cp "$P/skills/changelog/SKILL.md" "$T/good.md"
sed -i 's/^name: changelog/name: change-log/' "$P/skills/changelog/SKILL.md"
bad "skill name is not its folder's" "$P/skills/changelog/SKILL.md:2:7: skill name 'change-log' must be the name of its folder, 'changelog'"
sed -i 's/^name: change-log/name: Changelog/' "$P/skills/changelog/SKILL.md"
bad "skill name with capitals" "SKILL.md:2:7: skill name 'Changelog' must be 1-64 lowercase"
sed -i 's/^name: Changelog/name: changelog/; /^description/d' "$P/skills/changelog/SKILL.md"
bad "skill without description" "SKILL.md needs a description"
cp "$T/good.md" "$P/skills/changelog/SKILL.md"
sed -i 's/^license: MIT/licence: MIT/' "$P/skills/changelog/SKILL.md"
bad "unknown front matter key" "SKILL.md:4:1:"
cp "$T/good.md" "$P/skills/changelog/SKILL.md"
mv "$P/skills/changelog/SKILL.md" "$T/moved.md"
bad "folder without SKILL.md" "m.yaml:17:14: skill folder $P/skills/changelog has no SKILL.md"
mv "$T/moved.md" "$P/skills/changelog/SKILL.md"
sed -i 's|skills: \[skills/changelog\]|skills: [skills/nope]|' "$P/m.yaml"
bad "missing skill folder" "m.yaml:17:14: skill folder $P/skills/nope does not exist"
sed -i 's|skills: \[skills/nope\]|skills: [skills/changelog]|' "$P/m.yaml"
sed -i 's/^tools: Read, Grep, Bash/tools: Read, WebFetch, Bash/' "$P/.claude/agents/reviewer.md"
bad "an unknown Claude Code tool, at its column" "reviewer.md:4:14: Claude Code tool 'WebFetch' has no nightshift counterpart"
sed -i 's/^tools: Read, WebFetch, Bash/tools: Read, Bash/; s/^model: inherit/model: opus/' "$P/.claude/agents/reviewer.md"
bad "a Claude Code model alias that is not a model of the manifest" "reviewer.md:5:8: model 'opus' is not one of the manifest's models"
sed -i 's/^model: opus/model: inherit/; s/^color: blue/colour: blue/' "$P/.claude/agents/reviewer.md"
bad "an unknown key of an agent file" "reviewer.md:6:1:"
sed -i 's/^colour: blue/color: blue/' "$P/.claude/agents/reviewer.md"
"$NS" validate "$P/m.yaml" >/dev/null 2>&1
expect_rc "all fixed: validate passes" 0 "$?"
done_tests
