#!/usr/bin/env bash
# mcpclient.sh URL: nightshift as the client of the MCP conformance suite. The suite runs this
# with the test server's URL last and the scenario in MCP_CONFORMANCE_SCENARIO; it writes a
# manifest whose scripted model calls what the scenario's server offers, and runs it.
set -u
url=${!#}
scenario=${MCP_CONFORMANCE_SCENARIO:-initialize}
dir=$(mktemp -d /tmp/ns-mcpclient.XXXXXX)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/ws"
case "$scenario" in
tools_call) calls='[{ name: mcp__t__add_numbers, arguments: { a: 5, b: 3 } }]' ;;
sse-retry) calls='[{ name: mcp__t__test_reconnection, arguments: {} }]' ;;
*) calls='' ;;
esac
{
	echo "version: 1"
	echo "workspace: ws"
	echo "models:"
	echo "  default:"
	echo "    provider: scripted"
	echo "    replies:"
	[ -n "$calls" ] && echo "      - tool_calls: $calls"
	echo "      - tool_calls: [{ name: final_result, arguments: {} }]"
	echo "sandbox: { backend: none, network: ${MCP_CLIENT_NETWORK:-host} }"
	echo "mcp:"
	echo "  t: { url: \"$url\", timeout: 20s }"
	echo "workers:"
	echo "  w: { instructions: conformance, tools: ['mcp__t__*'], approval: { default: allow } }"
	echo "jobs:"
	echo "  j: { worker: w, input: go }"
} > "$dir/m.yaml"
run=$("${NIGHTSHIFT:?}" run "$dir/m.yaml" --out "$dir/runs") || exit 1
# the call must have succeeded, not only been made
if [ -n "$calls" ]; then
	zstd -dc "$run/jobs/j/events.jsonl.zst" | grep '"type":"tool_result"' | grep -q '"exit_code":0' || exit 1
fi
exit 0
