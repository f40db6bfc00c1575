#!/usr/bin/env bash
# team-night.sh: a team's real night end to end: a tiny Python project, a job that fixes it with
# a typed output, one that needs it, a matrix made from that output; then replay, flags, patches.
. "$(dirname "$0")/lib.sh"

# night DIR: a git repository DIR/proj whose test fails, and DIR/night/nightshift.yaml over it.
night() {
	local d=$1
	mkdir -p "$d/proj/src" "$d/proj/tests" "$d/night"
	printf 'def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n' >"$d/proj/src/calc.py"
	cat >"$d/proj/tests/test_calc.py" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
from calc import add, mul
assert add(2, 3) == 5, "add"
assert mul(2, 3) == 6, "mul"
PY
	printf '__pycache__/\n' >"$d/proj/.gitignore"
	# an hour old: an edit in the same second with the same size would leave Python's .pyc valid
	touch -d '1 hour ago' "$d/proj/src/calc.py"
	git -C "$d/proj" init -q -b main
	git -C "$d/proj" add -A
	git -C "$d/proj" -c user.name=t -c user.email=t@example.com commit -qm init
	cat >"$d/night/nightshift.yaml" <<'YAML'
version: 1
name: team-night
workspace: ../proj
models:
  fixmodel:
    provider: scripted
    replies:
      - tool_calls: [{ name: shell, arguments: { command: "python3 tests/test_calc.py" } }]
      - tool_calls: [{ name: edit_file, arguments: { path: src/calc.py, old: "return a - b", new: "return a + b" } }]
      - tool_calls: [{ name: shell, arguments: { command: "python3 tests/test_calc.py" } }]
      - tool_calls: [{ name: final_result, arguments: { fixed: true, files: [src/calc.py], summary: "add subtracted" } }]
  reviewmodel:
    provider: scripted
    replies:
      - tool_calls: [{ name: read_file, arguments: { path: src/calc.py } }]
      - tool_calls: [{ name: final_result, arguments: { verdict: ok, functions: [add, mul] } }]
  checkmodel:
    provider: scripted
    replies:
      - tool_calls: [{ name: shell, arguments: { command: "grep -n def src/calc.py" } }]
      - tool_calls: [{ name: final_result, arguments: { ok: true } }]
sandbox: { backend: namespace, network: none, timeout: 60s }
workers:
  fixer:
    model: fixmodel
    instructions: Make the failing tests pass.
    tools: [shell, read_file, edit_file]
    approval:
      rules:
        - { tool: shell, command: "python3 tests/*", decision: allow }
        - { tool: edit_file, path: "src/**", decision: allow }
    output:
      type: object
      required: [fixed, files, summary]
      properties:
        fixed: { type: boolean }
        files: { type: array, items: { type: string } }
        summary: { type: string }
  reviewer:
    model: reviewmodel
    instructions: Review the fix and list the functions to check.
    tools: [read_file]
    approval: { rules: [{ tool: read_file, decision: allow }] }
    output:
      type: object
      required: [verdict, functions]
      properties:
        verdict: { enum: [ok, needs-work] }
        functions: { type: array, items: { type: string } }
  checker:
    model: checkmodel
    instructions: Check one function.
    tools: [shell]
    approval: { rules: [{ tool: shell, command: "grep *", decision: allow }] }
    output: { type: object, required: [ok], properties: { ok: { type: boolean } } }
jobs:
  fix:
    worker: fixer
    input: "Tests fail; fix them."
  review:
    worker: reviewer
    needs: [fix]
    input: "Review: ${{ jobs.fix.output.summary }} in ${{ jobs.fix.output.files }}"
  check:
    worker: checker
    needs: [review]
    matrix: { fn: "${{ jobs.review.output.functions }}" }
    input: "Check ${{ matrix.fn }}"
YAML
}

N=$T/n
night "$N"
run=$("$NS" run "$N/night/nightshift.yaml" 2>"$T/run.err")
expect_rc "night: runs" 0 $?
check "night: the matrix members ran" test -f "$run/jobs/check-mul/output.json"

# replay of a night whose matrix comes from an output: the run keeps snapshots/default/ although
# it has one workspace; replay restores its first layer (not the end) and replays the members too
if userns; then
	rep=$("$NS" replay "$run" 2>"$T/replay.err")
	expect_rc "replay: a matrix from an output matches its record" 0 $?
	expect_grep "replay: restored from the first layer" 'restored from the first snapshot' "$T/replay.err"
	check "replay: the members are replayed" test -f "$rep/jobs/check-add/output.json"
	expect_grep "replay: every step compared" '6 steps compared: 0 diverged' "$T/replay.err"
	# a night of one member (run --job check-mul) replays as that: check-add is not made again
	git -C "$N/proj" checkout -q . && touch -d '1 hour ago' "$N/proj/src/calc.py"
	one=$("$NS" run "$N/night/nightshift.yaml" --job check-mul 2>/dev/null)
	"$NS" replay "$one" >/dev/null 2>"$T/one.err"
	expect_rc "replay: a night of one member matches" 0 $?
	expect_grep "replay: its 5 steps" '5 steps compared: 0 diverged' "$T/one.err"
	# next week's manifest renamed the matrix job: the record's members are not replayed, and that
	# is said; the replay keeps its one workspace in snapshots/ itself, the record in default/, and
	# what .gitignore ignores (__pycache__) is still left out of the effects
	sed 's/^  check:/  verify:/' "$N/night/nightshift.yaml" >"$N/night/renamed.yaml"
	"$NS" replay "$run" --manifest "$N/night/renamed.yaml" >/dev/null 2>"$T/renamed.err"
	expect_rc "replay: a member not replayed diverges" 4 $?
	expect_grep "replay: names the member" '^job check-mul: the record ran it, the replay did not' "$T/renamed.err"
	expect_nogrep "replay: ignored paths stay out across layouts" '__pycache__' "$T/renamed.err"
fi

# next week's rules tried on the archived night: the matrix members' calls are decided again too
tar -C "$(dirname "$run")" --zstd -cf "$T/night.tar.zst" "$(basename "$run")"
sed 's/command: "grep \*"/command: "ls *"/' "$N/night/nightshift.yaml" >"$N/night/week2.yaml"
"$NS" policy "$N/night/week2.yaml" --run "$T/night.tar.zst" >"$T/policy.out" 2>"$T/policy.err"
expect_rc "policy --run: exit 0" 0 $?
expect_grep "policy --run: a member's call decided again" '^job check-mul, step 6: shell grep -n def src/calc.py: allow by rule 1 -> deny by default' "$T/policy.out"
expect_grep "policy --run: every call" '6 recorded calls decided again, 2 would be decided otherwise' "$T/policy.err"

# audit --job of a matrix job: its members' calls, as run --job selects them
"$NS" audit "$run" --job check >"$T/audit.out" 2>&1
expect_rc "audit --job check: exit 0" 0 $?
expect_eq "audit --job check: the members' calls" "check-add check-mul" "$(awk '$1 ~ /^[0-9]+$/ && $2 != "tool" {print $2}' "$T/audit.out" | tr '\n' ' ' | sed 's/ $//')"
# the report's job table: a matrix member needs what its matrix job needs
"$NS" report "$run" --out "$T/night.html" >/dev/null 2>&1
expect_rc "report: written" 0 $?
expect_grep "report: a member's needs" 'job-check-mul">check-mul</a></td><td>[^<]*<span[^>]*>[^<]*</span></td><td>review</td>' "$T/night.html"

# install after the README's first command: the example's run and the report it wrote are the
# user's, not the package's (a tree of the Makefile, pkg/ and examples/ in a git repository)
src=$T/src
mkdir -p "$src"
cp -R "$ROOT/Makefile" "$ROOT/.gitignore" "$ROOT/pkg" "$ROOT/examples" "$src/"
rm -rf "$src/examples/hello/runs" "$src/examples/hello/workspace/reports"
git -C "$src" init -q && git -C "$src" add -A && git -C "$src" -c user.name=t -c user.email=t@example.com commit -qm tree
if userns; then
	"$NS" run "$src/examples/hello/nightshift.yaml" >/dev/null 2>&1
	expect_rc "install: the example runs" 0 $?
fi
mkdir -p "$src/examples/hello/runs/20261122T020000Z-3f9a" && echo '{}' >"$src/examples/hello/runs/20261122T020000Z-3f9a/run.json"
make -s -C "$src" install-files NS="$NS" DESTDIR="$T/stage" PREFIX=/usr >"$T/install.out" 2>&1
expect_rc "install: install-files" 0 $?
ex=$T/stage/usr/share/doc/nightshift/examples
check "install: the examples are installed" test -f "$ex/hello/nightshift.yaml"
check "install: not the example's runs" test ! -e "$ex/hello/runs"
check "install: nor what the example wrote" test ! -e "$ex/hello/workspace/reports"
expect_eq "install: exactly what git tracks" "$(git -C "$src" ls-files examples | wc -l)" "$(find "$ex" -type f | wc -l)"

# an admin policy with cost caps over a night on scripted models (which bill nothing and need no
# price), and a manifest that tries to weaken it: in a mount namespace of the test's own
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	mkdir -p "$T/etc"
	cat >"$T/etc/policy.yaml" <<'P'
approval: { rules: [{ tool: shell, command: "curl *", decision: abort }] }
max_cost: 1.00
budget: { cost: 5.00 }
sandbox: { backend: [namespace], network: none }
P
	chmod 644 "$T/etc/policy.yaml"
	sed 's/sandbox: { backend: namespace,/sandbox: { backend: none,/' "$N/night/nightshift.yaml" >"$N/night/weak.yaml"
	sed 's/sandbox: { backend: namespace, /sandbox: { /' "$N/night/nightshift.yaml" >"$N/night/nobackend.yaml"
	unshare -m --propagation private sh -c '
		mount -t tmpfs -o mode=755 tmpfs /etc/nightshift || exit 99
		cp "$1/etc/policy.yaml" /etc/nightshift/policy.yaml
		"$2" validate "$3/nightshift.yaml" >"$1/admin.out" 2>"$1/admin.err"; echo $? >"$1/admin.rc"
		"$2" validate "$3/weak.yaml" >/dev/null 2>"$1/weak.err"; echo $? >"$1/weak.rc"
		mkdir -p "$1/xdg/nightshift" && echo "sandbox: { backend: none }" >"$1/xdg/nightshift/config.yaml"
		XDG_CONFIG_HOME=$1/xdg "$2" validate "$3/nobackend.yaml" >/dev/null 2>"$1/user.err"
		XDG_CONFIG_HOME=$1/xdg "$2" validate "$3/nightshift.yaml" >/dev/null 2>&1; echo $? >"$1/own.rc"' sh "$T" "$NS" "$N/night"
	expect_eq "admin: scripted models need no price under a cost cap" 0 "$(cat "$T/admin.rc")"
	expect_grep "admin: validate says the policy is in force" 'under the admin policy /etc/nightshift/policy.yaml' "$T/admin.err"
	expect_eq "admin: a manifest cannot weaken the backends" 2 "$(cat "$T/weak.rc")"
	expect_eq "admin: the user's defaults are held to it, at their own line" \
		"nightshift: $T/xdg/nightshift/config.yaml:1:10: sandbox: sandbox backend 'none' is not allowed by the admin policy /etc/nightshift/policy.yaml" \
		"$(head -1 "$T/user.err")"
	expect_eq "admin: and said once, not at each worker and job that inherits them" 1 "$(grep -c 'not allowed' "$T/user.err")"
	expect_eq "admin: a manifest that writes its own backend does not inherit the user's" 0 "$(cat "$T/own.rc")"
	expect_grep "admin: at the manifest's line" "weak\.yaml:[0-9]+:[0-9]+: sandbox: sandbox backend 'none' is not allowed by the admin policy" "$T/weak.err"
fi

# the night as a GitHub Actions step sees it, on a night whose fix is denied (on_deny: fail)
if userns; then
	G=$T/gha && mkdir -p "$G" && night "$G"
	sed 's/path: "src\/\*\*", decision: allow/path: "lib\/**", decision: allow/; s/^    approval:$/    approval:\n      on_deny: fail/' \
		"$G/night/nightshift.yaml" >"$G/night/deny.yaml"
	: >"$G/out" && : >"$G/summary"
	GITHUB_ACTIONS=true GITHUB_OUTPUT=$G/out GITHUB_STEP_SUMMARY=$G/summary "$NS" run "$G/night/deny.yaml" >/dev/null 2>"$G/log"
	expect_rc "gha: a failed night exits 1" 1 $?
	expect_grep "gha: the failed job annotated" '^::error title=nightshift%3A job fix failed::job fix failed: step 2: edit_file denied' "$G/log"
	expect_grep "gha: a skipped job says why, once" "^::warning title=nightshift%3A job review skipped::job review skipped: job 'fix' it needs did not succeed$" "$G/log"
	expect_grep "gha: the status output" '^failed$' "$G/out"
	expect_grep "gha: the summary's table" '^\| fix \| .* failed \| 2 \| 2 \|' "$G/summary"
fi

# the provider out for a while (429 and 503 with retry-after): the night outlasts it; one that asks
# for a wait past retry_for is given up at once, saying so
MOCKPID=
trap '[ -n "$MOCKPID" ] && kill $MOCKPID 2>/dev/null; rm -rf "$T"' EXIT
# outage NAME SCRIPT_JSON RETRY_FOR: fix on the mock model; its stderr in $T/NAME.err, exit in $T/NAME.rc
outage() {
	printf '%s' "$2" >"$T/$1.json" && rm -f "$T/port"
	python3 "$ROOT/tests/mockmodel.py" "$T/$1.json" "$T/port" "$T/$1.log" & MOCKPID=$!
	waitfor 30 test -s "$T/port"
	python3 -c 'import sys; s=open(sys.argv[1]).read(); open(sys.argv[2],"w").write(s.replace("  fixmodel:\n    provider: scripted\n", "  fixmodel:\n    provider: openai\n    model: gpt-4.1-mini\n    base_url: http://127.0.0.1:%s/v1\n    api_key_env: NS_TEAM_NIGHT_KEY\n    retry_for: %s\n  unused:\n    provider: scripted\n" % (sys.argv[3], sys.argv[4]), 1))' \
		"$N/night/nightshift.yaml" "$N/night/$1.yaml" "$(cat "$T/port")" "$3"
	git -C "$N/proj" checkout -q . && touch -d '1 hour ago' "$N/proj/src/calc.py"
	NS_TEAM_NIGHT_KEY=sk-team-night-0123456789 "$NS" run "$N/night/$1.yaml" --job fix >/dev/null 2>"$T/$1.err"
	echo $? >"$T/$1.rc"
	kill $MOCKPID 2>/dev/null; wait $MOCKPID 2>/dev/null; MOCKPID=
}
if userns; then
	outage down '[{"error": 429, "message": "slow down", "headers": {"retry-after": "1"}},
		{"error": 503, "message": "overloaded", "headers": {"retry-after": "1"}},
		{"openai_calls": [["edit_file", {"path": "src/calc.py", "old": "return a - b", "new": "return a + b"}]]},
		{"openai_calls": [["final_result", {"fixed": true, "files": ["src/calc.py"], "summary": "add subtracted"}]]}]' 1m
	expect_eq "outage: the night outlasts it" 0 "$(cat "$T/down.rc")"
	expect_grep "outage: each retry said" 'turn 1: attempt 2 failed: HTTP 503: overloaded \(api_error\); retrying in 1\.0s' "$T/down.err"
	outage long '[{"error": 429, "message": "quota", "headers": {"retry-after": "30"}}]' 2s
	expect_eq "outage: past retry_for: the job fails" 1 "$(cat "$T/long.rc")"
	expect_grep "outage: past retry_for: says why" "gave up after 1 attempt in 0s: retry_for 2s; the next wait, 30\.0s as the server's retry-after asked, would pass it" "$T/long.err"
fi

# expect_every NAME PATTERN FILE: passes when every line of FILE matches the extended regex.
expect_every() {
	if ! grep -Evq -- "$2" "$3"; then _pass=$((_pass + 1)); else _fail=$((_fail + 1)); echo "FAIL $1:"; cat "$3"; fi
}

# break "OLD" "NEW": validate a copy of the manifest with OLD made NEW; every line of what it says
# names the file, line and column (or is the count of mistakes), exit 2, no run made.
break_it() {
	local name=$1 b=$N/night/bad.yaml
	python3 -c 'import sys; s=open(sys.argv[1]).read(); assert sys.argv[2] in s, sys.argv[2]; open(sys.argv[3],"w").write(s.replace(sys.argv[2], sys.argv[4], 1))' \
		"$N/night/nightshift.yaml" "$2" "$b" "$3"
	"$NS" validate "$b" >/dev/null 2>"$T/bad.err"
	expect_rc "validate: $name: exit 2" 2 $?
	expect_every "validate: $name: every line at its place" '^nightshift: [^ ]*/bad\.yaml(:[0-9]+:[0-9]+: | *: [0-9]+ mistakes$)' "$T/bad.err"
	check "validate: $name: says something" test -s "$T/bad.err"
}
nruns=$(ls "$N/night/runs" | wc -l)
break_it "a typo in needs" '    needs: [fix]' '    need: [fix]'
break_it "a typo at the top" 'sandbox: {' 'sandbx: {'
break_it "a duration" 'timeout: 60s' 'timeout: sixty'
break_it "an unclosed expression" '${{ jobs.fix.output.summary }}' '${{ jobs.fix.output.summary'
break_it "a job not needed" '${{ jobs.fix.output.files }}' '${{ jobs.check.output }}'
break_it "a bad regex" 'summary: { type: string }' 'summary: { type: string, pattern: "([a-" }'
break_it "a tool" 'tools: [read_file]' 'tools: [read_fil]'
break_it "a workspace" 'workspace: ../proj' 'workspace: ../nope'
break_it "an output field the schema lacks" '${{ jobs.fix.output.summary }}' '${{ jobs.fix.output.sumary }}'
expect_grep "validate: names the fields there are" "jobs\.fix\.output\.sumary: the output schema of job 'fix' has no 'sumary' there \(its properties: fixed, files, summary\)" "$T/bad.err"
break_it "a field of a string" '${{ jobs.fix.output.summary }}' '${{ jobs.fix.output.summary.text }}'
break_it "a matrix from an output field the schema lacks" 'review.output.functions' 'review.output.funcs'
expect_grep "validate: at the matrix key" "bad\.yaml:[0-9]+:[0-9]+: matrix key 'fn': jobs\.review\.output\.funcs: the output schema of job 'review' has no 'funcs' there" "$T/bad.err"
break_it "a matrix from a job not needed" 'review.output.functions' 'fix.output.functions'
# what run refuses before anything is made is said at its place too, as validate's warning is
python3 -c 'import sys; s=open(sys.argv[1]).read(); open(sys.argv[2],"w").write(s.replace("  fixmodel:\n    provider: scripted\n", "  fixmodel:\n    provider: openai\n    model: gpt-4.1-mini\n    base_url: http://127.0.0.1:9/v1\n    api_key_env: NS_TEAM_NIGHT_UNSET\n  unused:\n    provider: scripted\n", 1))' \
	"$N/night/nightshift.yaml" "$N/night/nokey.yaml"
unset NS_TEAM_NIGHT_UNSET
"$NS" run "$N/night/nokey.yaml" >/dev/null 2>"$T/nokey.err"
expect_rc "run: an unset key: exit 2" 2 $?
expect_grep "run: an unset key at its api_key_env" "^nightshift: [^ ]*/nokey\.yaml:9:5: model 'fixmodel': environment variable NS_TEAM_NIGHT_UNSET is not set" "$T/nokey.err"
expect_eq "validate: no run made" "$nruns" "$(ls "$N/night/runs" | wc -l)"

done_tests
