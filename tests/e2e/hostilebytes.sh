#!/usr/bin/env bash
# hostilebytes: hostile peers never make the runner loop or grow without bound (issue 28). An MCP
# server answering every message with a ping (HTTP), streaming pings without end (SSE), flooding
# pings and never reading stdin (stdio), sending 63 MiB in one message or 100000 nested arrays;
# a paginated tools/list past the list's caps (pages of 15 MiB, many tools, a schema of many
# values, over stdio and HTTP); a model sending a 63 MiB body; a step sending the egress proxy a request line holding a NUL.
# Each run must end well inside a bound that tells "ends" from "never ends" (120 s), say why,
# and keep the runner's peak memory (VmHWM of its own process) under the documented bound
# (docs/security.md, "Hostile bytes": 256 MiB here). And one job's tunnels never take the
# descriptors another job needs, with the descriptor limit at 1024.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
BOUND=$((256 * 1024)) # KiB
HS=$ROOT/tests/hostileserver.py
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$T"' EXIT
mkdir -p "$T/ws"

serve() { # MODE: a loopback server; its port in $P
	python3 "$HS" http "$1" "$T/port.$1" >/dev/null 2>&1 & PIDS+=($!)
	waitfor 60 test -s "$T/port.$1" || echo "no port for $1"
	P=$(cat "$T/port.$1")
}

mcpmanifest() { # FILE SERVER-YAML
	cat > "$1" <<YAML
version: 1
workspace: ws
sandbox: { backend: none, network: host }
mcp:
  s: $2
models:
  m:
    provider: scripted
    replies:
      - { tool_calls: [ { name: mcp__s__t, arguments: {} } ] }
      - { tool_calls: [ { name: final_result, arguments: {} } ] }
workers:
  w: { model: m, instructions: x, tools: ["mcp__s__*"], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
}

# run NAME: the runner under a 120 s bound, its peak memory in $T/NAME.rss
run() {
	local name=$1; shift
	timeout -s KILL 120 python3 "$ROOT/tests/peakrss.py" "$T/$name.rss" "$NS" run "$@" --out "$T/runs" \
		>"$T/$name.out" 2>"$T/$name.err"
	local rc=$?
	[ "$rc" = 137 ] && echo "FAIL $name: the runner was still running after 120 s" && tail -5 "$T/$name.err"
	return $rc
}
rssok() { [ -s "$T/$1.rss" ] && [ "$(cat "$T/$1.rss")" -lt $BOUND ]; }
events() { zstd -dcq "$(cat "$T/$1.out")/jobs/j/events.jsonl.zst"; }

mcpcase() { # NAME SERVER-YAML ERROR-PATTERN
	mcpmanifest "$T/$1.yaml" "$2"
	run "$1" "$T/$1.yaml"
	expect_rc "$1: the run ends (the call failed, the job went on)" 0 $?
	events "$1" > "$T/$1.ev" 2>/dev/null
	expect_grep "$1: the tool result says why" "\"type\":\"tool_result\".*$3" "$T/$1.ev"
	check "$1: peak memory $(cat "$T/$1.rss" 2>/dev/null) KiB, under $BOUND" rssok "$1"
}

serve ping
mcpcase mcp-http-ping "{ url: \"http://127.0.0.1:$P/mcp\", timeout: 60s }" "more than 100 requests"
serve sse
mcpcase mcp-http-sse "{ url: \"http://127.0.0.1:$P/mcp\", timeout: 60s }" "more than 100 requests"
serve big
mcpcase mcp-http-63mib "{ url: \"http://127.0.0.1:$P/mcp\", timeout: 60s }" "passes 16 MiB"
mcpcase mcp-stdio-flood "{ command: [python3, \"$HS\", stdio, flood], timeout: 60s }" "more than 100 requests|does not read its input"
mcpcase mcp-stdio-63mib "{ command: [python3, \"$HS\", stdio, bigline], timeout: 60s }" "longer than 16 MiB|beyond the caps"
mcpcase mcp-stdio-deep "{ command: [python3, \"$HS\", stdio, deep], timeout: 60s }" "deeper than 128"

# A paginated tools/list: each page within the message cap, the whole list past the list's caps
# (1000 tools, 256 KiB a tool, 4 MiB in all): the server is refused by name, the job fails, and
# the runner never holds more than a page (before: 24 pages of 15 MiB took it to 1847 MiB).
listcase() { # NAME SERVER-YAML ERROR-PATTERN
	mcpmanifest "$T/$1.yaml" "$2"
	run "$1" "$T/$1.yaml"
	expect_rc "$1: the job fails" 1 $?
	expect_grep "$1: the error names the server and the cap" "MCP server 's': tools/list: $3.*kept to 1000 tools" "$T/$1.err"
	check "$1: peak memory $(cat "$T/$1.rss" 2>/dev/null) KiB, under $BOUND" rssok "$1"
}
listcase list-stdio-pages "{ command: [python3, \"$HS\", stdio, pages], timeout: 60s }" "tool t takes 15360 KiB"
listcase list-stdio-pagesmid "{ command: [python3, \"$HS\", stdio, pagesmid], timeout: 60s }" "the tools take more than 4 MiB"
listcase list-stdio-manytools "{ command: [python3, \"$HS\", stdio, manytools], timeout: 60s }" "more than 1000 tools"
listcase list-stdio-bigschema "{ command: [python3, \"$HS\", stdio, bigschema], timeout: 60s }" "tool t takes [0-9]+ KiB"
serve pages
listcase list-http-pages "{ url: \"http://127.0.0.1:$P/mcp\", timeout: 60s }" "tool t takes 15360 KiB"
# A long list within the caps is kept whole: 900 tools over 3 pages, the tool on the first called.
mcpmanifest "$T/list-fine.yaml" "{ command: [python3, \"$HS\", stdio, fine], timeout: 60s }"
run list-fine "$T/list-fine.yaml"
expect_rc "list-fine: 900 tools over 3 pages: the run succeeds" 0 $?
events list-fine > "$T/list-fine.ev" 2>/dev/null
expect_grep "list-fine: the tool was called and answered" '"type":"tool_result".*ok' "$T/list-fine.ev"

# A model body of 63 MiB: refused at 16 MiB, never parsed.
serve model
cat > "$T/model.yaml" <<YAML
version: 1
workspace: ws
sandbox: { backend: none }
models:
  m: { provider: openai, base_url: "http://127.0.0.1:$P/v1", model: x, api_key_env: HB_KEY, retries: 1 }
workers:
  w: { model: m, instructions: x, tools: [] }
jobs:
  j: { worker: w }
YAML
HB_KEY=k run model-63mib "$T/model.yaml"
expect_rc "model-63mib: the job fails" 1 $?
expect_grep "model-63mib: the error names the cap" "passes 16 MiB" "$T/model-63mib.err"
check "model-63mib: peak memory $(cat "$T/model-63mib.rss" 2>/dev/null) KiB, under $BOUND" rssok model-63mib

# The egress proxy: hostile heads from a step (namespace sandbox: the proxy needs network.allow).
if ! userns; then
	skip "hostilebytes egress" "user namespaces are not available here: network.allow needs the namespace sandbox"
	done_tests
	exit
fi
cat > "$T/ws/heads.py" <<'PY'
import socket, sys
heads = [b"GET http://a.test/\0x HTTP/1.1\r\nHost: a\r\n\r\n", b"CONNECT a.test:443\0 HTTP/1.1\r\n\r\n",
         b"GET http://a.test/ HTTP/1.1\r\nHost: \0\r\n\r\n", b"GET http://a.test/ HTTP/1.1\nHost: a\n\n",
         b"GET http://a.test/ HTTP/1.1\r\nX: " + b"a" * 20000]
for h in heads:
    s = socket.create_connection(("127.0.0.1", 3128))
    try:
        s.sendall(h)
    except OSError:
        pass
    s.shutdown(socket.SHUT_WR)
    print(s.recv(100).split(b"\r\n")[0].decode())
PY
cat > "$T/egress.yaml" <<YAML
version: 1
workspace: ws
sandbox: { backend: namespace, timeout: 60s, network: { allow: ["a.test"] } }
models:
  m:
    provider: scripted
    replies:
      - { tool_calls: [ { name: shell, arguments: { command: "/usr/bin/python3 /workspace/heads.py" } } ] }
      - { tool_calls: [ { name: final_result, arguments: {} } ] }
workers:
  w: { model: m, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
run egress-heads "$T/egress.yaml"
expect_rc "egress-heads: the run ends" 0 $?
events egress-heads | python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e["type"] == "tool_result" and e.get("tool") == "shell":
        print(e.get("stdout", ""), end="")' > "$T/heads.out"
expect_eq "egress-heads: every hostile head answered 400" "$(printf 'HTTP/1.1 400 Bad Request\n%.0s' 1 2 3 4 5)" "$(cat "$T/heads.out")"

# Descriptors: with the limit at 1024 (soft and hard), one job opens 400 tunnels and holds them
# while a job without network runs its steps; they meet in a folder both mount.
python3 -c '
import socket, sys, os
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4096)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
import time
while True: time.sleep(60)' "$T/port.hold" >/dev/null 2>&1 & PIDS+=($!)
waitfor 60 test -s "$T/port.hold"
H=$(cat "$T/port.hold")
mkdir -p "$T/wa" "$T/wb" "$T/meet"
chmod 777 "$T/meet"
cat > "$T/wa/tunnels.py" <<PY
import os, socket, time
ok = busy = other = 0
held = []
for i in range(400):
    try:
        s = socket.create_connection(("127.0.0.1", 3128))
        s.sendall(b"CONNECT 127.0.0.1:$H HTTP/1.1\r\n\r\n")
        line = s.recv(100).split(b"\r\n")[0]
    except OSError:  # refused and closed before its answer was read: a reset
        busy += 1
        continue
    if b" 200 " in line:
        ok += 1
    elif b" 503 " in line or not line:  # a 503, or closed before any answer: refused either way
        busy += 1
    else:
        other += 1
    held.append(s)
open("/meet/a-holds", "w").write("%d\n" % ok)
end = time.time() + 60
while not os.path.exists("/meet/b-done") and time.time() < end:
    time.sleep(0.05)
print(ok, busy, other, os.path.exists("/meet/b-done"))
PY
steps=""
for i in 1 2 3 4 5 6; do steps="$steps      - { tool_calls: [ { name: shell, arguments: { command: \"echo step$i > /workspace/s$i\" } } ] }
"; done
cat > "$T/fd.yaml" <<YAML
version: 1
workspace: ws
sandbox: { backend: namespace, timeout: 90s, mounts: [ { source: meet, target: /meet, mode: rw } ] }
models:
  a:
    provider: scripted
    replies:
      - { tool_calls: [ { name: shell, arguments: { command: "/usr/bin/python3 /workspace/tunnels.py" } } ] }
      - { tool_calls: [ { name: final_result, arguments: {} } ] }
  b:
    provider: scripted
    replies:
      - { tool_calls: [ { name: shell, arguments: { command: "while [ ! -e /meet/a-holds ]; do sleep 0.05; done" } } ] }
$steps      - { tool_calls: [ { name: shell, arguments: { command: "touch /meet/b-done" } } ] }
      - { tool_calls: [ { name: final_result, arguments: {} } ] }
workers:
  a: { model: a, instructions: x, tools: [shell], approval: { default: allow }, sandbox: { network: { allow: ["127.0.0.1:$H"] } } }
  b: { model: b, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  a: { worker: a, workspace: wa }
  b: { worker: b, workspace: wb }
YAML
( ulimit -n 1024 && run fd "$T/fd.yaml" -j 2 )
expect_rc "fd: both jobs succeed with 1024 descriptors" 0 $?
run=$(cat "$T/fd.out")
zstd -dcq "$run/jobs/a/events.jsonl.zst" | python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e["type"] == "tool_result" and e.get("tool") == "shell":
        print(e.get("stdout", "").strip())' > "$T/fd.a"
read -r held busy other met < "$T/fd.a"
check "fd: job a held some tunnels ($held), the rest refused ($busy: 503 or reset), none answered otherwise ($other)" \
	test "${held:-0}" -gt 0 -a "${busy:-0}" -gt 0 -a "${other:-1}" = 0 -a "${held:-0}" -lt 400
expect_eq "fd: job b ran every step while a held its tunnels" "True" "${met:-}"
expect_eq "fd: job b's steps all wrote their files" "6" "$(ls "$T/wb" | grep -c '^s[0-9]$')"
# A declared file of 400 MiB a step wrote: copied into the run a buffer at a time, not read whole
# (before: the runner held up to 1 GiB for it, and cut a larger one without a word).
mkdir -p "$T/wbig"
cat > "$T/big.yaml" <<'YAML'
version: 1
workspace: wbig
sandbox: { backend: none }
models:
  d: { provider: scripted, replies: [ {tool_calls: [ {name: shell, arguments: {command: "head -c 419430400 /dev/zero | tr '\\0' x > big.bin"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: d, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w, files: [big.bin] }
YAML
run bigfile "$T/big.yaml"
expect_rc "bigfile: a 400 MiB declared file: the job succeeds" 0 $?
check "bigfile: peak memory $(cat "$T/bigfile.rss" 2>/dev/null) KiB, under $BOUND" rssok bigfile
run=$(cat "$T/bigfile.out")
expect_eq "bigfile: the copy is whole" "419430400" "$(stat -c %s "$run/jobs/j/files/big.bin" 2>/dev/null)"
expect_eq "bigfile: its file event's digest is the file's" "$(sha256sum < "$T/wbig/big.bin" | cut -d' ' -f1)" \
	"$(events bigfile | python3 -c 'import json,sys; print([e["sha256"] for e in map(json.loads, sys.stdin) if e["type"] == "file"][0])')"
check "bigfile: the run verifies" "$NS" audit "$run" --verify
rm -rf "$T/wbig" "$run"
done_tests
