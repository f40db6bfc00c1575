#!/usr/bin/env bash
# A matrix made from a hostile job's output (docs/security.md, "Origins and sinks"): values that
# make an over-long job id, ids that collide once made names, control characters. Each fails the
# member or the matrix with a reason; the runner never crashes, the run is sealed and verifies,
# and no control character reaches stderr.
source "$(dirname "$0")/lib.sh"
mkdir -p "$T/top/runs"
manifest() { # the scan job's final_result arguments (JSON)
	cat > "$T/top/m.yaml" <<YAML
version: 1
workspace: .
models:
  scan: { provider: scripted, replies: [ {tool_calls: [ {name: final_result, arguments: $1} ]} ] }
  fix: { provider: scripted, replies: [ {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  scanner: { model: scan, instructions: x }
  fixer: { model: fix, instructions: x }
jobs:
  scan: { worker: scanner }
  fix:
    worker: fixer
    needs: [scan]
    fail_fast: false
    matrix: { repo: "\${{ jobs.scan.output.repos }}" }
    input: "fix \${{ matrix.repo }}"
YAML
}
long=$(printf 'x%.0s' $(seq 300))

# an id over 128 characters (the first member): before, matrixunbind freed an unset struct and the runner died (SIGSEGV)
manifest "{repos: [$long, ok]}"
dir=$("$NS" run "$T/top/m.yaml" --out "$T/top/runs" 2>"$T/err"); rc=$?
expect_rc "a value making an id over 128 characters fails its member, not the runner" 1 "$rc"
expect_grep "saying why" "matrix job id 'fix-x+\.\.\.' is longer than 128 characters" "$T/err"
check "the other member ran" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"]
sys.exit(j["fix-ok"]["status"] != "succeeded")' "$dir/run.json"
check "the run is sealed and verifies" "$NS" audit "$dir" --verify

# control characters and workflow commands in a value: the id is made of name characters only
manifest '{repos: ["a\u001b[2J\n::error::x\u009b"]}'
dir=$("$NS" run "$T/top/m.yaml" --out "$T/top/runs" 2>"$T/err"); rc=$?
expect_rc "a value with controls" 0 "$rc"
check "no control character on stderr" bash -c "! LC_ALL=C grep -qP '[\x00-\x08\x0b-\x1f\x7f]|\xc2\x9b' '$T/err'"
expect_nogrep "no workflow command starts a line" '^::' "$T/err"
check "the run verifies" "$NS" audit "$dir" --verify

# two values that make one id
manifest '{repos: ["a b", "a_b"]}'
dir=$("$NS" run "$T/top/m.yaml" --out "$T/top/runs" 2>"$T/err"); rc=$?
expect_rc "two values making one id" 1 "$rc"
expect_grep "the matrix fails saying so" "job id 'fix-a_b' is made twice" "$T/err"
check "the run verifies" "$NS" audit "$dir" --verify
done_tests
