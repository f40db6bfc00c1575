#!/usr/bin/env bash
# mcpconformance: the official MCP conformance suite (@modelcontextprotocol/conformance, from
# npm) drives nightshift as an MCP client over Streamable HTTP, for every client scenario that
# is about tools: initialize, tools_call, and sse-retry (a tools/call answer that arrives on
# the event stream taken up again after it closed). Each scenario passed is one check here.
# Not run: elicitation-sep1034-client-defaults (nightshift refuses elicitation: nobody is at
# the keyboard) and auth/* (OAuth authorization flows; nightshift sends fixed headers).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../mcpnpm.sh"
mcp_conformance mcpconformance || { done_tests; exit; }
C="$CONFDIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
passed=0
for s in initialize tools_call sse-retry; do
	out="$T/$s.out"
	timeout 120 node "$C" client --command "bash $ROOT/tests/mcpclient.sh" --scenario "$s" --timeout 60000 >"$out" 2>&1
	rc=$?
	line=$(grep -E '^Passed: [0-9]+/[0-9]+' "$out" | tail -1)
	if [ "$rc" = 0 ] && grep -q 'OVERALL: PASSED' "$out" && [[ $line == *" 0 failed"* ]]; then
		passed=$((passed + 1))
		_pass=$((_pass + 1))
		echo "ok   conformance $s: $line"
	else
		_fail=$((_fail + 1))
		echo "FAIL conformance $s (exit $rc): $line"
		tail -30 "$out"
	fi
done
# the runner speaks to an HTTP server only where the job's network setting allows it
MCP_CLIENT_NETWORK=none NIGHTSHIFT=$NS bash "$ROOT/tests/mcpclient.sh" "http://127.0.0.1:9/mcp" >/dev/null 2>"$T/none.err"
expect_rc "network: none refuses an HTTP MCP server" 1 "$?"
expect_grep "and says why" "sandbox.network does not allow http://127.0.0.1:9/mcp" "$T/none.err"
echo "conformance: $passed of 3 client scenarios passed"
done_tests
