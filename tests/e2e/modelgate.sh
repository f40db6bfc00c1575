#!/usr/bin/env bash
# models.X.concurrency caps requests in flight on a model across the run's jobs, and a 429 with
# retry-after seen by one job holds back the other jobs on that model (tests/mockmodel.py records
# when each request arrived).
source "$(dirname "$0")/lib.sh"
for r in a b c; do mkdir -p "$T/ws/$r"; done
serve() { # SCRIPT-JSON: start the mock model, its port in $port
	printf '%s' "$1" > "$T/script.json"
	rm -f "$T/port" "$T/mock.log"
	python3 "$ROOT/tests/mockmodel.py" "$T/script.json" "$T/port" "$T/mock.log" & mp=$!
	waitfor 60 test -s "$T/port"
	port=$(cat "$T/port")
}
manifest() { # CONCURRENCY
	cat > "$T/m.yaml" <<YAML
version: 1
workspace: ws
models:
  default: { provider: openai, base_url: "http://127.0.0.1:$port/v1", model: m, retries: 2, concurrency: $1 }
workers:
  w: { instructions: x }
jobs:
  j:
    worker: w
    matrix: { r: [a, b, c] }
    workspace: ws/\${{ matrix.r }}
YAML
}
# arrivals: request arrival times, in order, relative to the first
arrivals() { python3 -c '
import json, sys
t = [json.loads(l)["time"] for l in open(sys.argv[1])]
print(" ".join(f"{x - t[0]:.2f}" for x in t))' "$T/mock.log"; }

serve '[{"openai_calls": [["final_result", {}]], "delay": 0.4}]'
manifest 1
dir=$("$NS" run "$T/m.yaml" -j 3 --out "$T/runs" 2>"$T/err"); rc=$?
kill $mp; wait $mp 2>/dev/null
expect_rc "three jobs on a model with concurrency 1" 0 "$rc"
check "one request at a time: each arrives after the last was answered ($(arrivals))" python3 -c '
import json, sys
t = sorted(json.loads(l)["time"] for l in open(sys.argv[1]))
sys.exit(not (len(t) == 3 and all(b - a >= 0.35 for a, b in zip(t, t[1:]))))' "$T/mock.log"

# Each answer is held until all three requests have arrived (30 s at most): at once means the
# third arrived while the first two were still being answered.
serve '[{"openai_calls": [["final_result", {}]], "hold": 3}]'
manifest 3
dir=$("$NS" run "$T/m.yaml" -j 3 --out "$T/runs" 2>"$T/err"); rc=$?
kill $mp; wait $mp 2>/dev/null
expect_rc "three jobs on a model with concurrency 3" 0 "$rc"; [ "$rc" = 0 ] || cat "$T/err"
expect_eq "concurrency 3: all three at once (requests in flight as each arrived)" "1 2 3" \
	"$(python3 -c 'import json,sys; print(*sorted(json.loads(l)["inflight"] for l in open(sys.argv[1])))' "$T/mock.log")"

# Two in flight; the first answered is a 429 asking for 2 s. The third job's request, which
# could start as soon as the second is answered (0.2 s), waits for the hold like the retry.
serve '[{"error": 429, "message": "slow down", "headers": {"retry-after": "2"}}, {"openai_calls": [["final_result", {}]], "delay": 0.2}]'
manifest 2
dir=$("$NS" run "$T/m.yaml" -j 3 --out "$T/runs" 2>"$T/err"); rc=$?
kill $mp; wait $mp 2>/dev/null
expect_rc "the run gets through the 429" 0 "$rc"
check "after a 429 no job sends before retry-after passed ($(arrivals))" python3 -c '
import json, sys
t = [json.loads(l)["time"] for l in open(sys.argv[1])]
sys.exit(not (len(t) == 4 and all(x - t[0] >= 1.8 for x in t[2:])))' "$T/mock.log"
printf 'version: 1\nmodels: { d: { provider: scripted, replies: [], concurrency: 0 } }\nworkers: { w: { model: d, instructions: x } }\njobs: { j: { worker: w } }\n' > "$T/b.yaml"
out=$("$NS" validate "$T/b.yaml" 2>&1); rc=$?
expect_rc "concurrency 0 is refused" 2 "$rc"
done_tests
