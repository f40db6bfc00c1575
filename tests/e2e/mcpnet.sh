#!/usr/bin/env bash
# mcpnet: an HTTP MCP server is reached by the address rules of the egress proxy, and every
# connection is a net_connection event. The attack: a server named in network.allow by a name
# that resolves (or is rebound) to a loopback address, to reach a service on the runner's own
# host; allowed only when an entry names the address itself.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
needuserns mcpnet "user namespaces are not available here: network.allow needs the namespace sandbox"
python3 "$ROOT/tests/mcphttp.py" "$T/port" "$T/requests" & SPID=$!
trap 'kill $SPID 2>/dev/null; rm -rf "$T"' EXIT
waitfor 60 test -s "$T/port"
P=$(cat "$T/port")
mkdir -p "$T/ws"
manifest() { # FILE NETWORK URL
	cat > "$1" <<YAML
version: 1
workspace: ws
sandbox: { backend: namespace, network: $2 }
mcp:
  s: { url: "$3", timeout: 10s }
models:
  m:
    provider: scripted
    replies:
      - { tool_calls: [ { name: mcp__s__echo, arguments: { text: hi } } ] }
      - { tool_calls: [ { name: final_result, arguments: {} } ] }
workers:
  w: { model: m, instructions: x, tools: ["mcp__s__*"], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
}
netev() { zstd -dcq "$1/jobs/j/events.jsonl.zst" | python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e["type"] == "net_connection":
        print(e.get("mcp_server"), e.get("host"), e.get("port"), e.get("address"), e.get("decision"), e.get("rule"))'; }

# 1. the loopback address named in the allow list: reached, and recorded
manifest "$T/a.yaml" "{ allow: [\"127.0.0.1:$P\"] }" "http://127.0.0.1:$P/mcp"
dir=$("$NS" run "$T/a.yaml" --out "$T/runs" 2>"$T/a.err"); rc=$?
expect_rc "a loopback server the allow list names: the job succeeds" 0 "$rc"
netev "$dir" > "$T/a.net"
expect_grep "its connection is a net_connection event" "^s 127.0.0.1 $P 127.0.0.1 allow 127.0.0.1:$P$" "$T/a.net"
expect_grep "the tool was called" "POST /mcp tools/call" "$T/requests"

# 2. a name in the allow list that resolves to loopback: refused before a byte is sent
: > "$T/requests"
manifest "$T/b.yaml" "{ allow: [\"mcp.test:$P\"] }" "http://mcp.test:$P/mcp"
dir=$(NIGHTSHIFT_TEST_RESOLVE="mcp.test=127.0.0.1" "$NS" run "$T/b.yaml" --out "$T/runs" 2>"$T/b.err"); rc=$?
expect_rc "a name that resolves to loopback: the job fails" 1 "$rc"
expect_grep "saying why" "mcp.test resolves to 127.0.0.1, a loopback address, which no entry of sandbox.network.allow names" "$T/b.err"
check "the server got nothing" test ! -s "$T/requests"
netev "$dir" > "$T/b.net"
expect_grep "the refusal is a net_connection event" "^s mcp.test $P 127.0.0.1 deny special-address:loopback$" "$T/b.net"
NIGHTSHIFT_TEST_RESOLVE="mcp.test=::ffff:127.0.0.1" "$NS" run "$T/b.yaml" --out "$T/runs" >/dev/null 2>"$T/b6.err"
expect_rc "a name that resolves to an IPv4-mapped loopback: refused too" 1 "$?"
NIGHTSHIFT_TEST_RESOLVE="mcp.test=169.254.169.254" "$NS" run "$T/b.yaml" --out "$T/runs" >/dev/null 2>"$T/bm.err"
expect_grep "a name that resolves to the metadata address: refused" "a cloud-metadata address" "$T/bm.err"

# 3. the same name, with the address named by an entry too: reached
: > "$T/requests"
manifest "$T/c.yaml" "{ allow: [\"mcp.test:$P\", \"127.0.0.1:$P\"] }" "http://mcp.test:$P/mcp"
dir=$(NIGHTSHIFT_TEST_RESOLVE="mcp.test=127.0.0.1" "$NS" run "$T/c.yaml" --out "$T/runs" 2>"$T/c.err"); rc=$?
expect_rc "the name and its address both named: the job succeeds" 0 "$rc"
netev "$dir" > "$T/c.net"
expect_grep "the event names both entries" "^s mcp.test $P 127.0.0.1 allow mcp.test:$P \+ 127.0.0.1:$P$" "$T/c.net"

# 4. network: host lets every address through, and still records it
manifest "$T/d.yaml" host "http://mcp.test:$P/mcp"
dir=$(NIGHTSHIFT_TEST_RESOLVE="mcp.test=127.0.0.1" "$NS" run "$T/d.yaml" --out "$T/runs" 2>"$T/d.err"); rc=$?
expect_rc "network: host: the job succeeds" 0 "$rc"
netev "$dir" > "$T/d.net"
expect_grep "and the connection is recorded" "^s mcp.test $P 127.0.0.1 allow network: host$" "$T/d.net"
"$NS" audit --verify "$dir" > /dev/null 2>&1
expect_rc "the run verifies" 0 $?
done_tests
