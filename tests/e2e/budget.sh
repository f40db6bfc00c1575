#!/usr/bin/env bash
# Budgets that cannot be fooled: randomized runs of parallel jobs whose replies start many delegates
# at once, nested two deep, against a loopback model that bills as the real API does. Whatever the
# draw, no job's tree spends past its max_tokens or max_cost, and the run not past budget.cost; a
# stopped job names the budget; every request carries an output cap.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { skip "budget" "python3 is needed for the model server"; done_tests; exit; }
MP=
trap '[ -n "$MP" ] && kill $MP 2>/dev/null; rm -rf "$T"' EXIT
mkdir -p "$T/ws"
ROUNDS=${ROUNDS:-10}
stopped=0 total=0
for round in $(seq 1 "$ROUNDS"); do
	python3 - "$round" "$T" <<'PY'
import json, random, sys
r = random.Random(int(sys.argv[1]) * 7919)
T = sys.argv[2]
json.dump({"window": 200000, "seed": int(sys.argv[1]), "roles": {
    "boss": {"turns": r.randint(1, 4), "delegate": "helper", "fanout": [0, r.randint(1, 6)], "output": [10, 300]},
    "helper": {"turns": r.randint(0, 3), "delegate": "leaf", "fanout": [0, r.randint(1, 4)], "output": [10, 300]},
    "leaf": {"turns": 0, "command": "true", "output": [10, 300]}}}, open(T + "/config.json", "w"))
jobs = {}
for i in range(3):
    jobs["j%d" % i] = {"worker": "boss", "max_tokens": r.randint(2000, 60000), "max_cost": round(r.uniform(0.002, 0.08), 4)}
budget = round(r.uniform(0.01, 0.2), 4)
helper = {"max_tokens": r.randint(1000, 30000)}
json.dump({"jobs": jobs, "budget": budget, "helper": helper}, open(T + "/limits.json", "w"))
with open(T + "/m.yaml", "w") as f:
    f.write("""version: 1
workspace: ws
budget: { cost: %s }
models:
  default: { provider: openai, base_url: "http://127.0.0.1:PORT/v1", model: mock-long, retries: 0,
             max_output_tokens: 300, price: { input: 2.5, output: 10 } }
workers:
  boss: { instructions: "ROLE=boss", delegates: [helper], approval: { default: allow } }
  helper: { instructions: "ROLE=helper", delegates: [leaf], approval: { default: allow }, max_tokens: %d }
  leaf: { instructions: "ROLE=leaf" }
jobs:
""" % (budget, helper["max_tokens"]))
    for k, v in jobs.items():
        f.write("  %s: { worker: boss, max_tokens: %d, max_cost: %s }\n" % (k, v["max_tokens"], v["max_cost"]))
PY
	rm -f "$T/port" "$T/log"
	python3 "$ROOT/tests/longmodel.py" "$T/config.json" "$T/port" "$T/log" & MP=$!
	waitfor 60 test -s "$T/port"
	sed -i "s/PORT/$(cat "$T/port")/" "$T/m.yaml"
	dir=$("$NS" run "$T/m.yaml" --out "$T/runs" -j 3 2>"$T/err"); rc=$?
	kill $MP; wait $MP 2>/dev/null; MP=
	out=$(python3 - "$dir/run.json" "$T/limits.json" "$T/log" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
lim = json.load(open(sys.argv[2]))
log = [json.loads(l) for l in open(sys.argv[3])]
jobs = run["jobs"]
bad = []
def tree(j):
    ids = [k for k in jobs if k == j or k.startswith(j + ".")]
    return sum(jobs[k]["usage"]["input"] + jobs[k]["usage"]["output"] for k in ids), sum(jobs[k]["cost"] for k in ids)
for j, l in lim["jobs"].items():
    t, c = tree(j)
    if t > l["max_tokens"]: bad.append("%s spent %d tokens > max_tokens %d" % (j, t, l["max_tokens"]))
    if c > l["max_cost"] + 1e-12: bad.append("%s cost %.6f > max_cost %.6f" % (j, c, l["max_cost"]))
for k in jobs:
    if k.rsplit(".", 1)[-1].startswith("helper-"):
        t, c = tree(k)
        if t > lim["helper"]["max_tokens"]: bad.append("%s spent %d > helper max_tokens %d" % (k, t, lim["helper"]["max_tokens"]))
total = sum(v["cost"] for v in jobs.values())
if total > lim["budget"] + 1e-12: bad.append("run cost %.6f > budget.cost %.6f" % (total, lim["budget"]))
billed = sum(r["tokens"] + r["output"] for r in log if r["status"] == 200)
counted = sum(v["usage"]["input"] + v["usage"]["output"] for v in jobs.values())
if billed != counted: bad.append("billed %d tokens, run.json counts %d" % (billed, counted))
if any(not isinstance(r["cap"], int) or r["cap"] > 300 for r in log): bad.append("a request without a cap within 300")
if abs(run["cost"] - total) > 1e-9: bad.append("run.json cost %.6f is not the sum %.6f" % (run["cost"], total))
errors = [v.get("error", "") for v in jobs.values()]
stops = [e for e in errors if "not sent:" in e]
if any("not sent:" in e and not any(w in e for w in ("max_tokens (", "max_cost ($", "budget.cost ($", "max_turns (")) for e in errors):
    bad.append("a stop that names no budget")
print(len(bad), len(stops), len(log))
for b in bad: print(b, file=sys.stderr)
PY
)
	set -- $out
	expect_eq "round $round: no budget passed ($3 requests)" 0 "${1:-x}"
	stopped=$((stopped + ${2:-0})); total=$((total + ${3:-0}))
done
expect_grep "audit shows the run's cost and its budget" 'cost: \$[0-9.]+ of a budget.cost of \$' <("$NS" audit "$dir")
check "budgets did stop jobs in these rounds ($stopped stops, $total requests)" test "$stopped" -gt 0
grep -h "not sent" "$T/err" | head -3

# max_tokens far above what a model can write is a budget, not an output cap.
python3 -c 'import json; json.dump({"window": 200000, "roles": {"main": {"turns": 1, "command": "true"}}}, open("'"$T"'/config.json", "w"))'
rm -f "$T/port" "$T/log"
python3 "$ROOT/tests/longmodel.py" "$T/config.json" "$T/port" "$T/log" & MP=$!
waitfor 60 test -s "$T/port"
for M in gpt-4o o3-mini claude-3-5-sonnet-20241022; do
	cat > "$T/c.yaml" <<YAML
version: 1
workspace: ws
models:
  default: { provider: openai, base_url: "http://127.0.0.1:$(cat "$T/port")/v1", model: $M, retries: 0 }
workers:
  w: { instructions: x, tools: [shell], approval: { default: allow }, max_tokens: 2000000 }
jobs:
  j: { worker: w }
YAML
	"$NS" run "$T/c.yaml" --out "$T/runs" >/dev/null 2>"$T/err"; rc=$?
	expect_rc "$M with max_tokens 2000000: the job runs" 0 "$rc"
done
expect_eq "each request's cap is the model's default, within its limit (gpt-4o, o3-mini, claude-3-5-sonnet)" "16384 32768 8192" \
	"$(python3 -c 'import json,sys; print(" ".join(sorted({str(json.loads(l)["cap"]) for l in open(sys.argv[1])})))' "$T/log")"
kill $MP; wait $MP 2>/dev/null; MP=
done_tests
