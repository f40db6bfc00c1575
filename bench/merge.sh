#!/usr/bin/env bash
# merge of two shard runs whose snapshots hold an incompressible workspace (MERGE_MB, default 64 MB,
# per shard: a full layer and the end snapshot), and audit --verify of the merged run. Peers in the
# same run: `cp -r` of both runs plus `sha256sum` of every copied file (the least any merge that
# checks what it copied must do), and `sha256sum -c` of the merged SHA256SUMS.
. "$(dirname "$0")/lib.sh" # goal
set -eu
NS=${NIGHTSHIFT:-./nightshift}
MB=${MERGE_MB:-64}
T=$(mktemp -d /tmp/ns-bench-merge.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/src/ws"
for i in $(seq 8); do head -c $((MB * 1024 * 1024 / 8)) /dev/urandom > "$T/src/ws/blob$i"; done
cat > "$T/src/m.yaml" <<'EOF'
version: 1
workspace: ws
sandbox: { backend: namespace, network: none, timeout: 60s }
models:
  dry: { provider: scripted, replies: [ { tool_calls: [ { name: shell, arguments: { command: "ls" } } ] },
                                       { tool_calls: [ { name: final_result, arguments: { ok: true } } ] } ] }
workers:
  w:
    model: dry
    instructions: Look.
    tools: [shell]
    approval: { rules: [ { tool: shell, command: ls, decision: allow } ] }
jobs:
  a: { worker: w, input: Look. }
  b: { worker: w, input: Look. }
EOF
runs=()
for j in a b; do
	cp -r "$T/src" "$T/$j"
	runs+=("$("$NS" run "$T/$j/m.yaml" --job "$j" --out "$T/runs-$j" 2>/dev/null)")
done
measure() {  # measure LABEL COMMAND...: prints seconds
	local label=$1; shift
	sync
	/usr/bin/time -f "%e %M" -o "$T/time" "$@" > /dev/null 2>"$T/err" || { cat "$T/err"; return 1; }
	read -r s kb < "$T/time"
	printf '%-40s %6.2f s  %6.1f MB RSS\n' "$label" "$s" "$(echo "$kb / 1024" | bc -l)" >&2
	echo "$s"
}
echo "two shard runs of $(du -sh "${runs[0]}" | cut -f1) each"
peer=$(measure "cp -r + sha256sum of the copies (peer)" bash -c \
	"mkdir '$T/peer' && cp -r '${runs[0]}' '${runs[1]}' '$T/peer/' && find '$T/peer' -type f -print0 | xargs -0 sha256sum > /dev/null")
m=$(measure "nightshift merge (verify, copy, seal)" "$NS" merge "${runs[@]}" --out "$T/merged")
dir=$(ls -d "$T"/merged/*)
c=$(measure "sha256sum -c SHA256SUMS (peer)" bash -c "cd '$dir' && sha256sum -c --quiet SHA256SUMS")
v=$(measure "nightshift audit --verify (merged)" "$NS" audit "$dir" --verify)
printf 'ratios: merge %.2fx its peer, verify %.2fx sha256sum -c\n' "$(echo "$m / $peer" | bc -l)" "$(echo "$v / $c" | bc -l)"
goal "merge / its peer (cp -r + sha256sum)" "$(printf '%.2f' "$(echo "$m / $peer" | bc -l)")" x '<=' 2
goal "audit --verify / sha256sum -c" "$(printf '%.2f' "$(echo "$v / $c" | bc -l)")" x '<=' 2
