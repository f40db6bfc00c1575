#!/usr/bin/env bash
# Matrix jobs: expansion and ids, ${{ matrix.KEY }} in the job's strings, jobs.ID.outputs for
# dependants, --job by the matrix's name, fail_fast and max_parallel, model: on a job, bad matrices.
source "$(dirname "$0")/lib.sh"
mkdir -p "$T/ws"
js() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"]; v=j.get(sys.argv[2], {}).get(sys.argv[3]); print(json.dumps(v) if isinstance(v,(dict,list)) else v)' "$dir/run.json" "$1" "$2"; }
jobs() { python3 -c 'import json,sys; print(" ".join(sorted(json.load(open(sys.argv[1]))["jobs"])))' "$dir/run.json"; }
cat > "$T/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  dry: { provider: scripted, replies: [ {tool_calls: [ {name: final_result, arguments: {verdict: ok}} ]} ] }
  other: { provider: scripted, replies: [ {tool_calls: [ {name: final_result, arguments: {verdict: other}} ]} ] }
workers:
  w: { model: dry, instructions: x, output: { type: object, required: [verdict], properties: { verdict: { type: string } } } }
  s: { model: dry, instructions: x }
jobs:
  review:
    worker: w
    input: "Review ${{ matrix.repo }} on ${{ matrix.os }} for ${{ inputs.who }}"
    matrix: { repo: [alpha, beta, "gam ma"], os: [linux, 12] }
    fail_fast: false
  report:
    worker: s
    model: other
    needs: [review]
    input: "all=${{ jobs.review.outputs }} one=${{ jobs.review.outputs.alpha-linux.verdict }} direct=${{ jobs.review-beta-12.output.verdict }}"
YAML
dir=$("$NS" run "$T/m.yaml" --set who=me --out "$T/runs" -j 3 2>"$T/err"); rc=$?
expect_rc "the matrix run succeeds" 0 "$rc"
expect_eq "one job per combination, ids ID-VALUE-VALUE, others made _" \
	"report review-alpha-12 review-alpha-linux review-beta-12 review-beta-linux review-gam_ma-12 review-gam_ma-linux" "$(jobs)"
expect_eq "run.json says which matrix and values" '{"job": "review", "values": {"repo": "gam ma", "os": "12"}}' "$(js review-gam_ma-12 matrix)"
input() { zstd -dcq "$dir/jobs/$1/events.jsonl.zst" | python3 -c 'import json,sys; print([json.loads(l) for l in sys.stdin][0]["input"])'; }
expect_eq "matrix values reach the input" "Review gam ma on 12 for me" "$(input review-gam_ma-12)"
expect_eq "a dependant gets the map of values to outputs" \
	'all={"alpha-linux":{"verdict":"ok"},"alpha-12":{"verdict":"ok"},"beta-linux":{"verdict":"ok"},"beta-12":{"verdict":"ok"},"gam ma-linux":{"verdict":"ok"},"gam ma-12":{"verdict":"ok"}} one=ok direct=ok' \
	"$(input report)"
expect_eq "model: on a job picks that model" other "$(js report model)"
"$NS" replay "$dir" --job review --out "$T/replays" >/dev/null 2>"$T/err"; rc=$?
expect_rc "replay --job by the matrix's name" 0 "$rc"
check "the job ran on the job's model" bash -c "zstd -dcq '$dir/jobs/report/events.jsonl.zst' | head -1 | grep -q '\"model\":\"other\"'"
check "the run verifies" "$NS" audit "$dir" --verify

# --job by the matrix's name runs every member; by a member's id, that one.
dir=$("$NS" run "$T/m.yaml" --set who=me --out "$T/runs" --job review 2>"$T/err")
expect_eq "--job MATRIX selects all its members" \
	"review-alpha-12 review-alpha-linux review-beta-12 review-beta-linux review-gam_ma-12 review-gam_ma-linux" "$(jobs)"
dir=$("$NS" run "$T/m.yaml" --set who=me --out "$T/runs" --job review-beta-linux 2>"$T/err")
expect_eq "--job ID selects one member" "review-beta-linux" "$(jobs)"

# A list from an input holding a JSON list; fail_fast (the default) cancels the rest of the
# matrix once one fails; max_parallel caps members at once.
cat > "$T/f.yaml" <<'YAML'
version: 1
workspace: ws
models:
  ok: { provider: scripted, replies: [ {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
  bad: { provider: scripted, replies: [ {text: "no"} ] }
workers:
  w: { model: ok, instructions: x, max_turns: 1 }
jobs:
  fan:
    worker: w
    model: "${{ matrix.m }}"
    matrix: { m: "${{ inputs.models }}" }
    max_parallel: 1
  after: { worker: w, needs: [fan] }
YAML
dir=$("$NS" run "$T/f.yaml" --set 'models=["bad","ok","ok2"]' --out "$T/runs" -j 4 2>"$T/err"); rc=$?
expect_rc "a job's model that is not in models is refused" 2 "$rc"
expect_grep "naming it" "job 'fan-ok2' uses model 'ok2', which is not in models" "$T/err"
dir=$("$NS" run "$T/f.yaml" --set 'models=["bad","ok"]' --out "$T/runs" -j 4 2>"$T/err"); rc=$?
expect_rc "a failed member fails the run" 1 "$rc"
expect_eq "the failed member" failed "$(js fan-bad status)"
expect_eq "fail_fast: the member not started is cancelled" cancelled "$(js fan-ok status)"
expect_grep "saying why" "not started: job 'fan-bad' of its matrix failed \(fail_fast\)" "$T/err"
expect_eq "the dependant is skipped" skipped "$(js after status)"
sed -i 's/max_parallel: 1/max_parallel: 1\n    fail_fast: false/' "$T/f.yaml"
dir=$("$NS" run "$T/f.yaml" --set 'models=["bad","ok"]' --out "$T/runs" -j 4 2>"$T/err"); rc=$?
expect_eq "fail_fast: false lets the others run" succeeded "$(js fan-ok status)"

# plan --shards spreads the members over the groups; the job that needs them runs after the
# groups (plan --after), from the groups' runs; merged, the whole verifies.
cat > "$T/p.yaml" <<'YAML'
version: 1
workspace: ws
models:
  dry: { provider: scripted, replies: [ {tool_calls: [ {name: final_result, arguments: {verdict: ok}} ]} ] }
workers:
  w: { model: dry, instructions: x }
jobs:
  review: { worker: w, matrix: { repo: [a, b, c, d] }, input: "${{ matrix.repo }}" }
  summary: { worker: w, needs: [review], input: "${{ jobs.review.outputs }}" }
YAML
expect_eq "plan spreads the members" '{"include":[{"shard":"1/2","index":1,"jobs":["review-a","review-c"]},{"shard":"2/2","index":2,"jobs":["review-b","review-d"]}]}' \
	"$("$NS" plan "$T/p.yaml" --shards 2 --json 2>/dev/null)"
expect_eq "the dependant runs after the groups" '["summary"]' "$("$NS" plan "$T/p.yaml" --shards 2 --after)"
s1=$("$NS" run "$T/p.yaml" --shard 1/2 --out "$T/sh" 2>/dev/null); r1=$?
s2=$("$NS" run "$T/p.yaml" --shard 2/2 --out "$T/sh" 2>/dev/null); r2=$?
expect_eq "both groups succeed" "0 0" "$r1 $r2"
fin=$("$NS" run "$T/p.yaml" --job summary --from "$s1" --from "$s2" --out "$T/sh" 2>"$T/err"); rc=$?
expect_rc "the job after the groups runs from their runs" 0 "$rc"
dir=$fin
expect_eq "and gets every member's output" \
	'{"a":{"verdict":"ok"},"b":{"verdict":"ok"},"c":{"verdict":"ok"},"d":{"verdict":"ok"}}' "$(input summary)"
merged=$("$NS" merge "$s1" "$s2" "$fin" --out "$T/merged" 2>"$T/err"); rc=$?
expect_rc "the three runs merge" 0 "$rc"
check "and the merged run verifies" "$NS" audit "$merged" --verify

# Bad matrices: file:line:col, exit 2, nothing run.
bad() { # NAME PATTERN JOBYAML
	printf 'version: 1\nworkspace: ws\nmodels: { d: { provider: scripted, replies: [] } }\nworkers: { w: { model: d, instructions: x } }\njobs:\n%s\n' "$3" > "$T/b.yaml"
	out=$("$NS" validate "$T/b.yaml" --set 'l=[1,{"a":2}]' --set x=nolist 2>&1); rc=$?
	expect_rc "$1: exit 2" 2 "$rc"
	case "$out" in *b.yaml:*:*:*"$2"*) _pass=$((_pass + 1)) ;; *) _fail=$((_fail + 1)); echo "FAIL $1: got: $out" ;; esac
}
bad "unknown matrix key" "the matrix has no key 'rep'" '  j: { worker: w, input: "${{ matrix.rep }}", matrix: { repo: [a] } }'
bad "matrix value without a matrix" "this job has no matrix" '  j: { worker: w, input: "${{ matrix.repo }}" }'
bad "empty list" "matrix key 'repo' has no values" '  j: { worker: w, matrix: { repo: [] } }'
bad "a value twice" "lists 'a' twice" '  j: { worker: w, matrix: { repo: [a, b, a] } }'
bad "not scalars" "each value must be a string" '  j: { worker: w, matrix: { repo: [[a]] } }'
bad "input list holding an object" "something other than a string" '  j: { worker: w, matrix: { repo: "${{ inputs.l }}" } }'
bad "an input that is no list" "is not a JSON list" '  j: { worker: w, matrix: { repo: "${{ inputs.x }}" } }'
bad "fail_fast without a matrix" "apply to a job with a matrix" '  j: { worker: w, fail_fast: false }'
bad "ids that clash" "job id 'j-a' is made twice" $'  j: { worker: w, matrix: { r: [a] } }\n  j-a: { worker: w }'
bad "outputs of a job without a matrix" "'k' has no matrix" $'  k: { worker: w }\n  j: { worker: w, needs: [k], input: "${{ jobs.k.outputs }}" }'
bad "output of a matrix job" "is a matrix job; write jobs.k.outputs" $'  k: { worker: w, matrix: { r: [a] } }\n  j: { worker: w, needs: [k], input: "${{ jobs.k.output }}" }'
bad "too many combinations" "more than 256 jobs" '  j: { worker: w, matrix: { a: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17], b: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16] } }'
done_tests
