#!/usr/bin/env bash
# hostilebytes: the runner's peak memory against hostile peers (docs/security.md, "Hostile
# bytes"): MCP servers flooding pings (HTTP and stdio), sending one 63 MiB line or body, an
# endless event stream; a model sending a 63 MiB body. Each figure is the peak resident size
# of the nightshift process itself (VmHWM; the servers are other processes), beside the
# documented bound, with a verdict; and a harmless MCP call for the baseline.
. "$(dirname "$0")/lib.sh" # goal
set -u
NS=${NIGHTSHIFT:?set NIGHTSHIFT}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
HS=$root/tests/hostileserver.py
BOUND=$((256 * 1024)) # KiB, as docs/security.md says
tmp=$(mktemp -d /tmp/ns-bench-hb.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/ws"
serve() {
	python3 "$HS" http "$1" "$tmp/port.$1" >/dev/null 2>&1 & pids+=($!)
	for _ in $(seq 1200); do [ -s "$tmp/port.$1" ] && break; sleep 0.1; done
	P=$(cat "$tmp/port.$1")
}
manifest() { # FILE SERVER-YAML
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
fail=0
measure() { # NAME MANIFEST
	local t0 t1 rss verdict
	t0=$(date +%s.%N)
	timeout -s KILL 300 python3 "$root/tests/peakrss.py" "$tmp/$1.rss" "$NS" run "$2" --out "$tmp/runs" \
		>"$tmp/$1.out" 2>"$tmp/$1.err"
	t1=$(date +%s.%N)
	rss=$(cat "$tmp/$1.rss" 2>/dev/null || echo 0)
	# why the call or the job failed, as recorded: a run that never reached the peer proves nothing
	why=$(zstd -dcq "$(cat "$tmp/$1.out")/jobs/j/events.jsonl.zst" 2>/dev/null |
		sed -n 's/.*"type":"\(tool_result\|job_end\)".*"error":"\([^"]*\)".*/\2/p' | head -n1)
	verdict=ok
	[ "$rss" -gt 0 ] && [ "$rss" -lt $BOUND ] || { verdict=OVER; fail=1; }
	case "$why" in *"16 MiB"* | *"more than 100"* | *"does not read"*) ;; *) verdict="NOT-REACHED"; fail=1 ;; esac
	printf '%-22s peak %7.1f MiB   bound %5d MiB   %-4s  (%.1f s) %s\n' "$1" "$(awk "BEGIN { print $rss / 1024 }")" \
		$((BOUND / 1024)) "$verdict" "$(awk "BEGIN { print $t1 - $t0 }")" "$why"
	goal "$1: peak RSS" "$(awk "BEGIN { printf \"%.1f\", $rss / 1024 }")" MiB '<=' $((BOUND / 1024))
}
serve ping
manifest "$tmp/ping.yaml" "{ url: \"http://127.0.0.1:$P/mcp\", timeout: 60s }"
measure mcp-http-ping "$tmp/ping.yaml"
serve sse
manifest "$tmp/sse.yaml" "{ url: \"http://127.0.0.1:$P/mcp\", timeout: 60s }"
measure mcp-http-sse-flood "$tmp/sse.yaml"
serve big
manifest "$tmp/big.yaml" "{ url: \"http://127.0.0.1:$P/mcp\", timeout: 60s }"
measure mcp-http-63mib-body "$tmp/big.yaml"
manifest "$tmp/flood.yaml" "{ command: [python3, \"$HS\", stdio, flood], timeout: 60s }"
measure mcp-stdio-ping-flood "$tmp/flood.yaml"
manifest "$tmp/line.yaml" "{ command: [python3, \"$HS\", stdio, bigline], timeout: 60s }"
measure mcp-stdio-63mib-line "$tmp/line.yaml"
serve model
cat > "$tmp/model.yaml" <<YAML
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
HB_KEY=k measure model-63mib-body "$tmp/model.yaml"
exit $fail
