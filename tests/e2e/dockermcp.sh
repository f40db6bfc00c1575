#!/usr/bin/env bash
# dockermcp: a stdio MCP server on the docker backend runs in a container of the job's sandbox
# settings (image, workspace at /workspace, mounts, the steps' uid, no network), its stdin and
# stdout through the Engine API's exec attach, as steps run. validate and doctor pass it, and the
# job then calls its tool. The image is tests/dockerenv.sh's busybox one with the host's /usr
# bound in for python3 (tests/mcpstdio.py). Without an engine it says SKIPPED and counts nothing.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/dockerenv.sh"
trap 'docker_down; rm -rf "$T"' EXIT
if ! command -v python3 >/dev/null || ! command -v zstd >/dev/null; then
	skip dockermcp "python3 or zstd missing"
	done_tests
	exit
fi
if ! docker_up "$T"; then
	skip dockermcp "$DOCKER_WHY"
	done_tests
	exit
fi
chmod 0755 "$T"
mkdir -p "$T/ws" "$T/srv"
chmod 0777 "$T/ws"
cp "$ROOT/tests/mcpstdio.py" "$T/srv/mcpstdio.py"
chmod 0755 "$T/srv" && chmod 0644 "$T/srv/mcpstdio.py"
cat >"$T/m.yaml" <<YAML
version: 1
name: dockermcp
workspace: ws
sandbox:
  backend: docker
  image: $DOCKER_IMAGE
  network: none
  mounts:
    - { source: /usr, target: /usr }
    - { source: /usr/lib, target: /lib }
    - { source: /usr/lib64, target: /lib64 }
    - { source: srv, target: /srv }
mcp:
  s: { command: [python3, /srv/mcpstdio.py], env: [MCP_MEET, MCP_MEET_WAIT] }
models:
  default: { provider: scripted, replies: [ {tool_calls: [ {name: mcp__s__meet, arguments: {me: a, other: b}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { instructions: x, tools: ["mcp__s__*"], approval: { default: allow } }
jobs:
  a: { worker: w }
YAML
export MCP_MEET=/workspace MCP_MEET_WAIT=0.5
(cd "$T" && "$NS" validate m.yaml >"$T/val.out" 2>&1); rc=$?
expect_rc "validate passes a stdio server on docker" 0 "$rc"
(cd "$T" && "$NS" doctor m.yaml >"$T/doc.out" 2>&1); rc=$?
expect_rc "doctor passes it" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/doc.out"
(cd "$T" && exec "$NS" run m.yaml --out "$T/runs" >"$T/out" 2>"$T/err") &
npid=$!
wait $npid; rc=$?
dir=$(cat "$T/out")
expect_rc "the job runs its server in a container" 0 "$rc"
[ "$rc" = 0 ] || tail -n 5 "$T/err"
expect_nogrep "no 'cannot run a long-running program'" "long-running" "$T/err"
zstd -dcq "$dir/jobs/a/events.jsonl.zst" >"$T/ev" 2>/dev/null
expect_grep "the tool answered (it found nobody to meet)" '"tool":"mcp__s__meet".*alone|alone.*"tool":"mcp__s__meet"' "$T/ev"
expect_eq "the server wrote the workspace as the steps' uid (1000)" 1000 "$(stat -c %u "$T/ws/a.in" 2>/dev/null)"
expect_grep "the server's start names the docker backend" '"backend":"docker"' "$T/ev"
expect_eq "no container left after the job" 0 "$(DOCKER_HOST=unix://$DOCKER_SOCK docker ps -aq --filter label=nightshift.pid=$npid | wc -l)"
# a server the image does not have: the job fails with what the shell said, it does not hang
sed 's|command: \[python3, /srv/mcpstdio.py\]|command: [/srv/no-such-server]|' "$T/m.yaml" >"$T/bad.yaml"
(cd "$T" && timeout 120 "$NS" run bad.yaml --out "$T/runs" >/dev/null 2>"$T/bad.err"); rc=$?
expect_rc "a server missing from the image fails its job" 1 "$rc"
expect_grep "saying what the shell said" "no-such-server.*not found|not found.*no-such-server" "$T/bad.err"
done_tests
