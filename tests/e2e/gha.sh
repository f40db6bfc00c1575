#!/usr/bin/env bash
# GitHub Actions in a fake GitHub environment (temp files for $GITHUB_OUTPUT and
# $GITHUB_STEP_SUMMARY): outputs read back by the documented syntax, the summary capped, and text
# from a model or a tool that looks like a workflow command shown escaped, never obeyed.
source "$(dirname "$0")/lib.sh"
parse() { python3 "$ROOT/tests/e2e/ghaparse.py" "$@"; }
json() { python3 -c 'import json,sys; d=json.load(sys.stdin)
for k in sys.argv[1:]: d = d[k] if not isinstance(d, str) else json.loads(d)[k]
print(d if isinstance(d, str) else json.dumps(d, sort_keys=True))' "$@"; }

mkdir -p "$T/g/ws"
python3 - "$T/g/m.yaml" <<'EOF'
import json, sys
big = "0123456789<>&" * (300000 // 13)
say = "::error::x\n  ::warning::x2\n##[error]x3\n\u00a0::add-mask::x4"
tool = "printf '::error::y\\n##[warning]z\\n::set-output name=a::b\\n'"
m = {"version": 1, "name": "gha", "workspace": "ws",
     "sandbox": {"backend": "namespace", "network": "none", "timeout": "30s"},
     "models": {
         "talk": {"provider": "scripted", "replies": [
             {"text": say, "tool_calls": [{"name": "shell", "arguments": {"command": tool}}]},
             {"tool_calls": [{"name": "final_result", "arguments": {"note": "::error::out\nline2 %0A"}}]}]},
         "bad": {"provider": "scripted", "replies": [
             {"tool_calls": [{"name": "shell", "arguments": {"command": "curl http://example.invalid/::error::q"}}]}]},
         "big": {"provider": "scripted", "replies": [
             {"tool_calls": [{"name": "final_result", "arguments": {"note": big}}]}]}},
     "workers": {}, "jobs": {}}
for w in ("talk", "bad", "big"):
    m["workers"][w] = {"model": w, "instructions": "Do it.", "tools": ["shell"],
                       "approval": {"rules": [{"tool": "shell", "command": "printf *", "decision": "allow"},
                                              {"tool": "shell", "command": "curl *", "decision": "abort"}]},
                       "output": {"type": "object", "required": ["note"], "properties": {"note": {"type": "string"}}}}
    m["jobs"][w] = {"worker": w, "input": "Go."}
open(sys.argv[1], "w").write(json.dumps(m, indent=1))
EOF

export GITHUB_ACTIONS=true GITHUB_OUTPUT=$T/out GITHUB_STEP_SUMMARY=$T/sum
: > "$T/out"
printf '## an earlier step wrote this\n\n' > "$T/sum"
dir=$("$NS" run "$T/g/m.yaml" --out "$T/runs" 2>"$T/log"); rc=$?
rundir=$dir
expect_rc "run: one job aborted" 3 "$rc"
via=run
if [ ! -s "$T/out" ]; then
	skip "run writes GitHub outputs" "cmd/run.c does not call gharun yet; the same checks go through merge"
	via=merge
	dir=$("$NS" merge "$dir" --out "$T/merged" 2>"$T/log"); rc=$?
	expect_rc "merge of that run: aborted, as the run" 3 "$rc"
fi

# --- $GITHUB_OUTPUT, read back by the documented syntax ---
check "$via: GITHUB_OUTPUT parses" bash -c "python3 '$ROOT/tests/e2e/ghaparse.py' outputs '$T/out' > '$T/out.json'"
expect_eq "$via: run-dir is the run directory, absolute" "$(realpath "$dir")" "$(json run-dir < "$T/out.json")"
expect_eq "$via: status" "aborted" "$(json status < "$T/out.json")"
expect_eq "$via: exit-code" "3" "$(json exit-code < "$T/out.json")"
expect_eq "$via: output-talk is jobs/talk/output.json" "$(json < "$dir/jobs/talk/output.json")" \
	"$(json output-talk < "$T/out.json" | json)"
expect_eq "$via: a multiline value with :: and %0A comes back exact" "$(printf '::error::out\nline2 %%0A')" \
	"$(json output-talk note < "$T/out.json")"
expect_eq "$via: outputs holds every job's output" "$(json < "$dir/jobs/big/output.json")" \
	"$(json outputs big < "$T/out.json")"
check "$via: no output for the aborted job" bash -c "! grep -q '^output-bad<<' '$T/out'"
expect_eq "$via: every value uses a delimiter of its own" "$(grep -c '<<ghadelimiter_' "$T/out")" \
	"$(grep -o '<<ghadelimiter_[0-9a-f]*' "$T/out" | sort -u | wc -l)"

# --- the log: the only workflow commands are the groups and annotations nightshift makes ---
parse commands "$T/log" > "$T/cmds"
expect_eq "$via: a group per job" "3" "$(grep -c '"command": "group"' "$T/cmds")"
expect_eq "$via: groups closed" "3" "$(grep -c '"command": "endgroup"' "$T/cmds")"
expect_eq "$via: one ::error annotation, for the aborted job" "1" "$(grep -c '"command": "error"' "$T/cmds")"
expect_grep "$via: it names the job in its title" '"title": "nightshift: job bad aborted"' "$T/cmds"
expect_eq "$via: nothing else is a command" "" \
	"$(grep -v '"command": "\(group\|endgroup\|error\)", .*"v": 2' "$T/cmds")"
expect_grep "$via: the model's ::error::x shown escaped" '^ *%3A:error::x$' "$T/log"
expect_grep "$via: indented ::warning::x2 shown escaped" '^ *%3A:warning::x2$' "$T/log"
expect_grep "$via: the model's ##[error]x3 shown escaped" '##%5Berror\]x3' "$T/log"
expect_grep "$via: ::add-mask:: after a no-break space shown escaped" "$(printf '\302\240')%3A:add-mask::x4" "$T/log"
expect_grep "$via: the tool's ::error::y shown escaped" '^ *\| %3A:error::y$' "$T/log"
expect_grep "$via: the tool's ##[warning]z shown escaped" '##%5Bwarning\]z' "$T/log"
expect_grep "$via: the tool's ::set-output shown escaped" '%3A:set-output name=a::b' "$T/log"
expect_grep "$via: the denied call is in the job's group" 'abort shell: .*curl' "$T/log"

# --- the step summary: appended, a table, outputs in collapsible blocks, capped ---
expect_grep "$via: the earlier step's summary is kept" '^## an earlier step wrote this' "$T/sum"
expect_grep "$via: summary names the run" "nightshift run <code>$(basename "$dir")</code>" "$T/sum"
expect_grep "$via: a row per job" '^\| talk \| .*succeeded \| 2 \| 1 \|' "$T/sum"
expect_grep "$via: the aborted job with its denied call" '^\| bad \| .*aborted \| .* \| 1 \|$' "$T/sum"
expect_grep "$via: outputs in collapsible blocks" '^<details><summary>talk: output</summary>' "$T/sum"
expect_grep "$via: the error in a block" '^<details><summary>bad: error</summary>' "$T/sum"
expect_grep "$via: a big output is cut, and says where the whole is" 'cut at [0-9]+ of [0-9]+ bytes; the whole text is jobs/big/output.json' "$T/sum"
check "$via: HTML in outputs is escaped" grep -q '0123456789&lt;&gt;&amp;' "$T/sum"
check "$via: summary below 1 MiB" test "$(stat -c %s "$T/sum")" -lt 1048576

# --- a mistake in the manifest (exit 2): status error, exit-code, ::error at file:line:col ---
printf 'version: 1\nmodls: {}\nmodels: { d: { provider: scripted, replies: [ {text: hi} ] } }\nworkers: { w: { instructions: x, model: d } }\njobs: { j: { worker: w, retries: lots } }\n' > "$T/bad.yaml"
: > "$T/out3"
GITHUB_OUTPUT=$T/out3 "$NS" run "$T/bad.yaml" --out "$T/runs3" > "$T/stdout3" 2> "$T/log3"; rc=$?
expect_rc "manifest mistake: exit 2" 2 "$rc"
check "manifest mistake: GITHUB_OUTPUT parses" bash -c "python3 '$ROOT/tests/e2e/ghaparse.py' outputs '$T/out3' > '$T/out3.json'"
expect_eq "manifest mistake: status" "error" "$(json status < "$T/out3.json")"
expect_eq "manifest mistake: exit-code" "2" "$(json exit-code < "$T/out3.json")"
expect_grep "manifest mistake: ::error at the key's line and column" "^::error file=$T/bad.yaml,line=2,col=1,title=nightshift::unknown key 'modls'" "$T/log3"
expect_grep "manifest mistake: and at the second one" "^::error file=$T/bad.yaml,line=5,col=[0-9]+,title=nightshift::expected an integer" "$T/log3"
check "manifest mistake: no run directory" test ! -e "$T/runs3"
: > "$T/out4"
GITHUB_OUTPUT=$T/out4 "$NS" run --no-such-flag > /dev/null 2> "$T/log4"; rc=$?
expect_rc "bad flag: exit 2" 2 "$rc"
check "bad flag: GITHUB_OUTPUT parses" bash -c "python3 '$ROOT/tests/e2e/ghaparse.py' outputs '$T/out4' > '$T/out4.json'"
expect_eq "bad flag: status" "error" "$(json status < "$T/out4.json")"
expect_grep "bad flag: ::error names the flag" '^::error title=nightshift::run: unknown flag --no-such-flag' "$T/log4"

# --- a job that never ran: its group says so, not "No such file" ---
printf 'version: 1\nworkspace: ws\nmodels: { d: { provider: scripted, replies: [ {text: hi} ] } }\nworkers: { w: { instructions: x, model: d } }\njobs: { a: { worker: w }, b: { worker: w, needs: [a] } }\n' > "$T/g/skip.yaml"
: > "$T/out5"
GITHUB_OUTPUT=$T/out5 "$NS" run "$T/g/skip.yaml" --out "$T/runs5" > /dev/null 2> "$T/log5"
expect_grep "skipped job: its group" '^::group::nightshift job b: skipped' "$T/log5"
expect_grep "skipped job: says it never started" 'the job never started' "$T/log5"
expect_nogrep "skipped job: no 'No such file'" 'No such file' "$T/log5"

# --- each job's cost and tokens in the summary: a loopback model that bills as the real API does ---
if command -v python3 >/dev/null; then
	mkdir -p "$T/c/ws"
	echo '{"window": 64000, "roles": {"one": {"turns": 1, "command": "true", "output": [30, 60]},
	  "three": {"turns": 3, "command": "true", "output": [30, 60]}, "boss": {"turns": 1, "delegate": "one", "fanout": [2, 2]}}}' > "$T/c/config.json"
	python3 "$ROOT/tests/longmodel.py" "$T/c/config.json" "$T/c/port" "$T/c/log" & MP=$!
	waitfor 60 test -s "$T/c/port"
	cat > "$T/c/m.yaml" <<YAML
version: 1
workspace: ws
sandbox: { backend: namespace, network: none }
models:
  default: { provider: openai, base_url: "http://127.0.0.1:$(cat "$T/c/port")/v1", model: mock-long, retries: 0,
             max_output_tokens: 100, price: { input: 3, output: 15 } }
workers:
  one: { instructions: "ROLE=one", tools: [shell], approval: { default: allow } }
  three: { instructions: "ROLE=three", tools: [shell], approval: { default: allow } }
  boss: { instructions: "ROLE=boss", delegates: [one], approval: { default: allow } }
jobs:
  a: { worker: one }
  b: { worker: three }
  c: { worker: boss }
YAML
	: > "$T/c/sum"
	cdir=$(GITHUB_OUTPUT=$T/c/out GITHUB_STEP_SUMMARY=$T/c/sum "$NS" run "$T/c/m.yaml" --out "$T/c/runs" 2>"$T/c/err"); rc=$?
	kill $MP 2>/dev/null; wait $MP 2>/dev/null
	expect_rc "priced run: succeeded" 0 "$rc"
	[ "$rc" = 0 ] || tail -5 "$T/c/err"
	# every row's cost and tokens are its own job's, as run.json has them; delegates have rows
	python3 - "$cdir/run.json" "$T/c/sum" > "$T/c/rows" <<'PY'
import json, re, sys
run = json.load(open(sys.argv[1]))
rows = {}
for line in open(sys.argv[2]):
    m = re.match(r"^\| (\S+) \| .*? \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\S+) \| (\d+) \|$", line)
    if m:
        rows[m.group(1)] = m.groups()[1:]
for k, j in sorted(run["jobs"].items()):
    r = rows.get(k)
    cost = j["cost"]
    want = ("$%.4f" if cost >= 0.01 else "$%.6f") % cost
    print(k, "row" if r else "no-row", r is not None and r[0] == str(j["turns"]), r is not None and r[2] == str(j["usage"]["input"]),
          r is not None and r[3] == str(j["usage"]["output"]), r is not None and r[4] == want, cost > 0)
costs = sorted(j["cost"] for j in run["jobs"].values())
print("distinct", len(set(costs)) >= 3)
PY
	expect_eq "summary: job a's row has its own turns, tokens and cost" "a row True True True True True" "$(grep '^a ' "$T/c/rows")"
	expect_eq "summary: job b's row has its own turns, tokens and cost" "b row True True True True True" "$(grep '^b ' "$T/c/rows")"
	expect_eq "summary: job c's row has its own turns, tokens and cost" "c row True True True True True" "$(grep '^c ' "$T/c/rows")"
	expect_eq "summary: each delegate has its row with its cost" "2" "$(grep -c '^c\.one-[0-9]* row True True True True True' "$T/c/rows")"
	expect_eq "summary: the jobs' costs differ (not the run's cost repeated)" "distinct True" "$(grep distinct "$T/c/rows")"
	expect_grep "summary: the cost column is in the header" '^\| job \| status \| turns \| steps \| tokens in \| tokens out \| cost \| denied calls \|$' "$T/c/sum"
	expect_grep "summary: the run's cost below the table" 'Cost: \$[0-9.]+\.' "$T/c/sum"
else
	skip "summary: each job's cost" "python3 is needed for the model server"
fi
expect_grep "summary: a model without a price: no cost" '^\| talk \| .*succeeded \| 2 \| 1 \| [0-9]+ \| [0-9]+ \| — \| 0 \|$' "$T/sum"

# --- a job error naming a folder "##[stop-commands]x" with "::error::x" and an ESC in it: the
# annotation and the group show it escaped, through the one sanitiser; nothing else is a command ---
cat > "$T/g/evil.yaml" <<'YAML'
version: 1
workspace: ws
models:
  d: { provider: scripted, replies: [ { tool_calls: [ { name: final_result, arguments: {} } ] } ] }
workers:
  w: { model: d, instructions: x }
jobs:
  j: { worker: w, files: ["##[stop-commands]x/::error::x\u001b[31m/out.txt"] }
YAML
: > "$T/out6"
GITHUB_OUTPUT=$T/out6 "$NS" run "$T/g/evil.yaml" --out "$T/runs6" > /dev/null 2> "$T/log6"; rc=$?
expect_rc "hostile folder name: the job fails" 1 "$rc"
parse commands "$T/log6" > "$T/cmds6"
expect_eq "hostile folder name: one ::error annotation" "1" "$(grep -c '"command": "error"' "$T/cmds6")"
expect_eq "hostile folder name: nothing else is a command" "" \
	"$(grep -v '"command": "\(group\|endgroup\|error\)", .*"v": 2' "$T/cmds6")"
expect_nogrep "hostile folder name: no ##[ anywhere in the log" '##\[' "$T/log6"
check "hostile folder name: no ESC in the log" bash -c "! grep -q \$'\\x1b' '$T/log6'"
expect_grep "hostile folder name: the annotation shows it escaped" \
	'^::error title=nightshift%3A job j failed::job j failed: declared file ##%5Bstop-commands\]x/::error::x\\x1b\[31m/out\.txt' "$T/log6"

# --- outside Actions: nothing written, nothing but progress on stderr ---
: > "$T/out2"
GITHUB_ACTIONS= GITHUB_OUTPUT=$T/out2 "$NS" merge "$rundir" --out "$T/merged2" > /dev/null 2> "$T/log2"; rc=$?
expect_rc "merge outside Actions" 3 "$rc"
check "no outputs outside Actions" test ! -s "$T/out2"
check "no workflow commands outside Actions" bash -c "! grep -q '^::' '$T/log2'"
done_tests
