#!/usr/bin/env bash
# mount: a mount's target may lie under any folder, system folders of image host included (the
# namespace sandbox makes its mount point on a tmpfs laid over the folder, its entries shown
# again, the host untouched); a bad target is a manifest error at its file:line:col, exit 2,
# before anything runs, and nothing blames the machine for it.
source "$(dirname "$0")/lib.sh"
command -v zstd >/dev/null || { skip mount "zstd is not installed"; done_tests; exit; }
mkdir -p "$T/ws" "$T/data" "$T/out"
echo hello > "$T/data/f"

# bad targets, each alone: exit 2, the line and column of the target, no run directory
bad() { # $1: what, $2: the target as YAML
	cat > "$T/bad.yaml" <<YAML
version: 1
workspace: ws
sandbox:
  mounts:
    - { source: ./data, target: $2 }
models: { m: { provider: scripted, replies: [] } }
workers: { w: { model: m, instructions: x } }
jobs: { a: { worker: w } }
YAML
	"$NS" run "$T/bad.yaml" --out "$T/badruns" >/dev/null 2>"$T/bad.err"; rc=$?
	expect_rc "$1: run refuses it" 2 "$rc"
	expect_grep "$1: at the target's line and column" "bad.yaml:5:[0-9]+: a mount's target" "$T/bad.err"
	check "$1: nothing blames the machine" bash -c "! grep -q 'this machine' '$T/bad.err'"
	"$NS" validate "$T/bad.yaml" >/dev/null 2>&1; rc=$?
	expect_rc "$1: validate refuses it" 2 "$rc"
}
bad "a relative target" data
bad "a target with .." /opt/../etc
bad "a target ending in .." /opt/..
bad "a target with ." /opt/./x
bad "an empty name" //opt/x
bad "a trailing /" /data/
bad "the root" /
bad "the workspace" /workspace
bad "inside the workspace" /workspace/sub
bad "/proc" /proc
bad "inside /proc" /proc/self
bad "inside /dev" /dev/shm/x
bad "/sys" /sys/fs
bad "the skills" /skills/x
bad "a control character" '"/data\tx"'
check "no run directory was made" test ! -e "$T/badruns"

needuserns mount
# good targets: under read-only system folders (absent there), under a name that merely begins
# like a refused one, writable under /usr/local
before=$(ls -a /opt /usr/local/share | sha256sum)
cat > "$T/m.yaml" <<'YAML'
version: 1
workspace: ws
sandbox:
  backend: namespace
  mounts:
    - { source: ./data, target: /opt/nightshift-mcp-test/deep, mode: ro }
    - { source: ./data, target: /workspaces/data, mode: ro }
    - { source: ./data, target: /devtools, mode: ro }
    - { source: ./out, target: /usr/local/share/nightshift-outbox, mode: rw }
models:
  m:
    provider: scripted
    replies:
      - tool_calls:
          - { name: shell, arguments: { command: "cat /opt/nightshift-mcp-test/deep/f /workspaces/data/f /devtools/f; ls /opt | wc -l" } }
          - { name: shell, arguments: { command: "echo w > /usr/local/share/nightshift-outbox/x && echo wrote" } }
          - { name: shell, arguments: { command: "touch /opt/nightshift-probe || touch /opt/nightshift-mcp-test/deep/no || echo refused" } }
          - { name: shell, arguments: { command: "head -2 /etc/passwd | tail -1 | cut -d: -f1; ls /usr/local/share | wc -l" } }
      - tool_calls: [ { name: final_result, arguments: {} } ]
workers:
  w: { model: m, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  a: { worker: w }
YAML
dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "mounts under system folders run" 0 "$rc"
out() { zstd -dcq "$dir/jobs/a/events.jsonl.zst" | python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e["type"] == "tool_result" and e.get("step") == int(sys.argv[1]):
        print(e.get("stdout", "")); break' "$1"; }
expect_eq "each mount shows its files" "hello
hello
hello
$(ls /opt | grep -vx nightshift-mcp-test | wc -l | awk '{print $1 + 1}')" "$(out 1)"
expect_eq "a writable mount under /usr/local takes writes" wrote "$(out 2)"
expect_eq "x reached the host's folder" w "$(cat "$T/out/x" 2>/dev/null)"
expect_eq "the shadowed system folder stays read-only" refused "$(out 3)"
expect_eq "what was laid on /etc stays (the generated passwd), /usr/local/share shows its entries and the mount" \
	"nightshift
$(ls /usr/local/share | grep -vx nightshift-outbox | wc -l | awk '{print $1 + 1}')" "$(out 4)"
expect_eq "the host's /opt and /usr/local/share are unchanged" "$before" "$(ls -a /opt /usr/local/share | sha256sum)"
done_tests
