#!/usr/bin/env bash
# attack-server: a hostile or broken model provider or MCP server (tests/attackserver.py) never
# holds a job past its bounds, and the run it leaves verifies.
# 1. A job's timeout bounds its model requests: a provider that keeps a stream open with a comment
#    a second (the idle watchdog fed, no answer) held a job with `timeout: 3s` for the model's
#    timeout (10m) and then retry_for (10m) more; a 503 storm held it for retry_for. Now each
#    attempt, each wait and the retries end with the job's time.
# 2. A reply of 15 MiB of raw control bytes (JSON forbids them, cJSON takes them) printed as a
#    90 MiB model_response line, which the log refuses: the job failed and its own run no longer
#    verified (job_end's usage without the model_response line that held it). Now an answer that
#    takes more than 16 MiB escaped for the record is refused like a body past 16 MiB.
# 3. An MCP server's call or start never passes the job's timeout, and a tool list is asked for
#    within one timeout, all its pages: a stdio server that never answered held a job of
#    `timeout: 3s` for the server's 60 s; one that says its list changed and then serves 100
#    pages, each just inside the 2 s timeout, made one call (or its start) take 150 s.
# 4. Under backend none a stdio MCP server ran as a bare process group: children that left it
#    (setsid, a double fork) and ignored SIGTERM lived on after the run. Now the server runs under
#    the keeper a step has, which kills its group and every orphan at the job's end.
# 5. A provider that gives two calls of one reply the same id: replay answered MCP calls by id and
#    tool from the record, so both got the first call's result ("echo one" twice, where the night
#    had "one" then "two") and the replay said it matched. Each recorded result now answers one call.
# 6. A provider that reports 1 input and 1 output token for every request passed max_tokens: the
#    budgets settle on the usage reported, so a job of 20000 tokens sent 20 requests of 40 KB
#    each (about 200000 tokens at any tokenizer's rate) and stopped only at max_turns. Now a
#    request is charged at least one token per 16 bytes sent and received.
# 7. A delegate ran with no deadline at all: a job of `timeout: 3s` whose delegate talks to the
#    drip provider was held like the job in 1. A delegate now has what is left of its caller's time.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
AS=$ROOT/tests/attackserver.py
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$T"' EXIT
mkdir -p "$T/ws"
export ATTACK_KEY=attack-key-0123456789

serve() { # KIND MODE: a loopback peer; its port in $P
	python3 "$AS" "$1" "$2" "$T/port.$1.$2" >/dev/null 2>&1 & PIDS+=($!)
	waitfor 30 test -s "$T/port.$1.$2" || echo "no port for $1 $2"
	P=$(cat "$T/port.$1.$2")
}

# run NAME MANIFEST: the runner under a 30 s bound; its time in $T/NAME.secs
run() {
	local name=$1 start=$SECONDS; shift
	timeout -s KILL 30 "$NS" run "$@" --out "$T/runs" >"$T/$name.out" 2>"$T/$name.err"
	local rc=$?
	echo $((SECONDS - start)) >"$T/$name.secs"
	[ "$rc" = 137 ] && echo "FAIL $name: the runner was still running after 30 s" && tail -5 "$T/$name.err"
	return $rc
}
verified() { "$NS" audit --verify "$(cat "$T/$1.out")" >/dev/null 2>"$T/$1.audit"; }
within() { [ "$(cat "$T/$1.secs")" -le "$2" ]; }

modelmanifest() { # FILE PORT JOB-TIMEOUT
	cat >"$1" <<YAML
version: 1
workspace: ws
sandbox: { backend: none }
models:
  m: { provider: openai, base_url: "http://127.0.0.1:$2/v1", model: gpt-4o, api_key_env: ATTACK_KEY }
workers:
  w: { model: m, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w, timeout: $3 }
YAML
}

DRIP_PORT=
for mode in drip storm; do
	serve model $mode
	[ $mode = drip ] && DRIP_PORT=$P
	modelmanifest "$T/$mode.yaml" "$P" 3s
	run "model-$mode" "$T/$mode.yaml"
	expect_rc "model-$mode: the job fails" 1 $?
	check "model-$mode: ended by the job's timeout ($(cat "$T/model-$mode.secs") s, 3 s timeout)" within "model-$mode" 12
	expect_grep "model-$mode: says the job's timeout ran out" "job's timeout ran out" "$T/model-$mode.err"
	check "model-$mode: the run verifies" verified "model-$mode"
done

cat >"$T/delegate.yaml" <<YAML
version: 1
workspace: ws
sandbox: { backend: none }
models:
  s: { provider: scripted, replies: [ { tool_calls: [ { name: d, arguments: { input: go } } ] } ] }
  m: { provider: openai, base_url: "http://127.0.0.1:$DRIP_PORT/v1", model: gpt-4o, api_key_env: ATTACK_KEY }
workers:
  w: { model: s, instructions: x, delegates: [d], approval: { default: allow } }
  d: { model: m, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w, timeout: 3s }
YAML
run model-delegate "$T/delegate.yaml"
expect_rc "model-delegate: the job fails" 1 $?
check "model-delegate: ended by the caller's timeout ($(cat "$T/model-delegate.secs") s, 3 s timeout)" within model-delegate 12
check "model-delegate: the run verifies" verified model-delegate

serve model controls
modelmanifest "$T/controls.yaml" "$P" 3s
run model-controls "$T/controls.yaml"
expect_rc "model-controls: the job fails" 1 $?
expect_grep "model-controls: says why" "escaped for the record" "$T/model-controls.err"
check "model-controls: the run verifies" verified model-controls

mcpmanifest() { # FILE MODE MCP-TIMEOUT JOB-TIMEOUT
	cat >"$1" <<YAML
version: 1
workspace: ws
sandbox: { backend: none }
mcp:
  s: { command: [python3, "$AS", stdio, $2, "$T/mark.$2"], timeout: $3 }
models:
  m:
    provider: scripted
    replies:
      - { tool_calls: [ { name: mcp__s__t, arguments: {} } ] }
      - { tool_calls: [ { name: mcp__s__t, arguments: {} } ] }
      - { tool_calls: [ { name: final_result, arguments: {} } ] }
workers:
  w: { model: m, instructions: x, tools: ["mcp__s__*"], approval: { default: allow } }
jobs:
  j: { worker: w, timeout: $4 }
YAML
}
events() { zstd -dcq "$(cat "$T/$1.out")/jobs/j/events.jsonl.zst"; }

mcpmanifest "$T/mute.yaml" mute 60s 3s
run mcp-mute "$T/mute.yaml"
expect_rc "mcp-mute: the job fails" 1 $?
check "mcp-mute: ended by the job's timeout ($(cat "$T/mcp-mute.secs") s, 3 s timeout)" within mcp-mute 12
expect_grep "mcp-mute: says the job's timeout ran out" "job's timeout \\(3s\\) ran out" "$T/mcp-mute.err"
check "mcp-mute: the run verifies" verified mcp-mute

mcpmanifest "$T/relist.yaml" relist 2s 60s
run mcp-relist "$T/relist.yaml"
expect_rc "mcp-relist: the job ends (the call went on after the list timed out)" 0 $?
check "mcp-relist: the list within one timeout ($(cat "$T/mcp-relist.secs") s)" within mcp-relist 12
events mcp-relist >"$T/mcp-relist.ev" 2>/dev/null
expect_grep "mcp-relist: the relist's error is on the call" '"relist_error":"tools/list: .*no answer within' "$T/mcp-relist.ev"
check "mcp-relist: the run verifies" verified mcp-relist

mcpmanifest "$T/slowlist.yaml" slowlist 2s 60s
run mcp-slowlist "$T/slowlist.yaml"
expect_rc "mcp-slowlist: the job fails (its server did not start)" 1 $?
check "mcp-slowlist: the start within two timeouts ($(cat "$T/mcp-slowlist.secs") s)" within mcp-slowlist 12
expect_grep "mcp-slowlist: says the list timed out" "tools/list: .*no answer within" "$T/mcp-slowlist.err"
check "mcp-slowlist: the run verifies" verified mcp-slowlist

mcpmanifest "$T/forks.yaml" forks 10s 60s
run mcp-forks "$T/forks.yaml"
expect_rc "mcp-forks: the job succeeds" 0 $?
check "mcp-forks: the run ends at once ($(cat "$T/mcp-forks.secs") s)" within mcp-forks 12
check "mcp-forks: nothing the server started is left" gone "$T/mark.forks" 5
pkill -9 -f "$T/mark.forks" 2>/dev/null

serve model dupids
cat >"$T/dupids.yaml" <<YAML
version: 1
workspace: ws
sandbox: { backend: none }
mcp:
  s: { command: [python3, "$AS", stdio, echo] }
models:
  m: { provider: openai, base_url: "http://127.0.0.1:$P/v1", model: gpt-4o, api_key_env: ATTACK_KEY }
workers:
  w: { model: m, instructions: x, tools: ["mcp__s__*"], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
run model-dupids "$T/dupids.yaml"
expect_rc "model-dupids: the night succeeds" 0 $?
"$NS" replay "$(cat "$T/model-dupids.out")" --out "$T/runs" >"$T/replay-dupids.out" 2>"$T/replay-dupids.err"
expect_rc "model-dupids: the replay matches" 0 $?
outputs() { zstd -dcq "$1/jobs/j/events.jsonl.zst" | grep '"type":"tool_result"' | grep -o 'echo {[^}]*}' | tr '\n' ' '; }
expect_eq "model-dupids: the replay answers each call as the night did" "$(outputs "$(cat "$T/model-dupids.out")")" \
	"$(outputs "$(cat "$T/replay-dupids.out")")"

serve model underreport
INSTR=$(python3 -c 'print(("x" * 59 + " ") * 500)')
cat >"$T/underreport.yaml" <<YAML
version: 1
workspace: ws
sandbox: { backend: none }
models:
  m: { provider: openai, base_url: "http://127.0.0.1:$P/v1", model: gpt-4o, api_key_env: ATTACK_KEY, max_output_tokens: 1000 }
workers:
  w: { model: m, instructions: "$INSTR", tools: [shell], approval: { default: allow }, max_turns: 20, max_tokens: 20000 }
jobs:
  j: { worker: w }
YAML
run model-underreport "$T/underreport.yaml"
expect_rc "model-underreport: the job fails" 1 $?
expect_grep "model-underreport: stopped by max_tokens" "max_tokens \\(20000\\) of job j would be passed" "$T/model-underreport.err"
check "model-underreport: the run verifies" verified model-underreport

done_tests
