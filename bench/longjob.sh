#!/usr/bin/env bash
# longjob: a 66-turn job whose steps each print ~50 KB, against a stateless loopback model with a
# 64000-token window that bills and refuses as the real API does (tests/longmodel.py). Reports
# whether the job succeeded, the largest request against the window, the input billed beside what
# the same job would have billed sending every result in full every turn (append-everything: no
# elision, the same cut tool results), and the share of requests whose messages extend the
# previous request's (what a provider's prompt cache can hit).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
NS=${NIGHTSHIFT:-$root/nightshift}
[ -x "$NS" ] || make -C "$root" -s nightshift >/dev/null
tmp=$(mktemp -d /tmp/ns-bench-longjob.XXXXXX)
mp=
trap '[ -n "$mp" ] && kill $mp 2>/dev/null; [ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"' EXIT
mkdir -p "$tmp/ws"
echo '{"window": 64000, "roles": {"main": {"turns": 66, "command": "seq 1 10000", "output": [40, 200]}}}' > "$tmp/config.json"
python3 "$root/tests/longmodel.py" "$tmp/config.json" "$tmp/port" "$tmp/log" & mp=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
cat > "$tmp/m.yaml" <<YAML
version: 1
workspace: ws
models:
  default: { provider: openai, base_url: "http://127.0.0.1:$(cat "$tmp/port")/v1", model: mock-long, retries: 0,
             context_window: 64000 }
workers:
  w: { instructions: "ROLE=main", tools: [shell], approval: { default: allow }, max_turns: 100 }
jobs:
  long: { worker: w }
YAML
start=$(date +%s.%N)
dir=$("$NS" run "$tmp/m.yaml" --out "$tmp/runs" 2>"$tmp/err") && rc=0 || rc=$?
end=$(date +%s.%N)
zstd -dcq "$dir/jobs/long/events.jsonl.zst" > "$tmp/ev.jsonl"
python3 - "$tmp/log" "$tmp/ev.jsonl" "$dir/run.json" "$rc" "$start" "$end" <<'PY'
import json, sys
log = [json.loads(l) for l in open(sys.argv[1])]
ev = [json.loads(l) for l in open(sys.argv[2])]
run = json.load(open(sys.argv[3]))
rc, secs = int(sys.argv[4]), float(sys.argv[6]) - float(sys.argv[5])
ok = [r for r in log if r["status"] == 200]
billed = sum(r["tokens"] for r in ok)
# append-everything: each request as sent plus every elided result back at its full size
elided = {}
for e in ev:
    if e["type"] == "context_elided":
        for it in e["elided"]:
            elided[it["call_id"]] = e["turn"]
full = {}
for e in ev:
    for m in e.get("messages", []):
        if m.get("role") == "tool":
            full[m["tool_call_id"]] = len(json.dumps(m["content"])) - len(json.dumps("[elided to fit the context window: the result of step 10 (shell, 48894 bytes) was removed from the conversation; call the tool again if you need it]"))
append = 0
for r in ok:
    extra = sum(full.get(c, 0) for c, t in elided.items() if t <= r["turn"] + 1)
    append += r["tokens"] + (extra + 3) // 4
ext = sum(1 for a, b in zip(ok, ok[1:]) if b["messages"][:len(a["messages"])] == a["messages"])
elisions = sum(1 for e in ev if e["type"] == "context_elided")
print("job: %s (exit %d), %d requests, %d turns, %d elisions, %.1f s" % (run["jobs"]["long"]["status"], rc, len(log),
      run["jobs"]["long"]["turns"], elisions, secs))
print("largest request: %d tokens + cap %d = %d of a 64000-token window" % max((r["tokens"], r["cap"], r["tokens"] + r["cap"]) for r in log))
print("input billed: %d tokens; append-everything: %d tokens; ratio %.3f (%.1fx less)" % (billed, append, billed / append, append / billed))
print("requests extending the previous one: %d of %d (%.0f%%)" % (ext, len(ok) - 1, 100.0 * ext / max(1, len(ok) - 1)))
sys.exit(0 if run["jobs"]["long"]["status"] == "succeeded" and all(r["tokens"] + r["cap"] <= 64000 for r in log) else 1)
PY
