#!/usr/bin/env bash
# replaynight: replay of a realistic night. A small Python project with its pytest suite, a git
# repository, a .gitignore for the caches; a stateless mock model (it picks each reply from the
# request's conversation, as the real APIs do); steps that print timings, dates and `ls -la`, run
# pytest (which writes __pycache__ and .pytest_cache) and `git status` (which rewrites .git/index).
# Replay holds: exit 0 with the drift listed, output.json byte-identical, the end workspace equal
# to the recorded one; --strict exits 4. Then a night whose step copies a mounted input: the input
# changed, replay --manifest exits 4 naming the step and the file.
source "$(dirname "$0")/lib.sh"
needuserns replaynight

# The python3 the steps find: the sandbox's PATH over the host's /usr.
SPATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
haspytest() { env PATH=$SPATH python3 -c 'import pytest' 2>/dev/null; }
if ! haspytest || ! command -v git >/dev/null; then
	echo "replaynight: installing python3-pytest and git"
	apt-get install -y -qq python3-pytest git >/dev/null 2>&1 || true
fi
if ! haspytest || ! command -v git >/dev/null; then
	skip replaynight "python3-pytest or git is not installed and cannot be (ci/packages.txt lists both)"
	done_tests
	exit
fi

# The project: a package, 30 parametrised tests and two more, a repository with one commit.
P=$T/proj/ws
mkdir -p "$P/src/calc" "$P/tests"
cat >"$P/src/calc/__init__.py" <<'PY'
def add(a, b):
    return a + b


def mul(a, b):
    return a * b
PY
cat >"$P/tests/test_calc.py" <<'PY'
import pytest
from calc import add, mul


@pytest.mark.parametrize("a", range(15))
def test_add(a):
    assert add(a, 1) == a + 1


@pytest.mark.parametrize("a", range(15))
def test_mul(a):
    assert mul(a, 2) == a + a
PY
printf '__pycache__/\n.pytest_cache/\n' >"$P/.gitignore"
(cd "$P" && git init -q && git add -A && git -c user.name=t -c user.email=t@example.com commit -qm init) ||
	echo "FAIL: the project's repository could not be made"
chmod 0751 "$P"

printf '%s' '{"by_turn": [
 {"openai_calls": [["shell", {"command": "ls -la && date && PYTHONPATH=src python3 -m pytest -q tests 2>&1 | tail -n 3"}]]},
 {"openai_calls": [["write_file", {"path": "src/calc/extra.py", "content": "def triple(x):\n    return 3 * x\n"}],
                   ["write_file", {"path": "tests/test_extra.py", "content": "from calc.extra import triple\n\n\ndef test_triple():\n    assert triple(2) == 6\n\n\ndef test_zero():\n    assert triple(0) == 0\n"}]]},
 {"openai_calls": [["shell", {"command": "PYTHONPATH=src python3 -m pytest -q tests; echo pid $$; git status --short; ls -la src/calc"}]]},
 {"openai_calls": [["shell", {"command": "git add -A && git status --short && date +%s%N"}]]},
 {"openai_calls": [["final_result", {"passed": 32, "summary": "added triple with two tests"}]]}
]}' >"$T/script.json"
MOCKLOG=$T/mock.log
python3 "$ROOT/tests/mockmodel.py" "$T/script.json" "$T/port" "$MOCKLOG" & MOCKPID=$!
waitfor 60 test -s "$T/port"
PORT=$(cat "$T/port")
cat >"$T/proj/m.yaml" <<YAML
version: 1
workspace: ws
models:
  default: { provider: openai, base_url: "http://127.0.0.1:$PORT/v1", model: mock-1, api_key_env: MOCK_KEY, retries: 0 }
workers:
  dev:
    instructions: Add a triple function with tests, and run the suite.
    tools: [shell, write_file]
    approval:
      rules:
        - { tool: write_file, path: "src/**", decision: allow }
        - { tool: write_file, path: "tests/**", decision: allow }
        - { tool: shell, decision: allow }
    output: { type: object, required: [passed, summary], properties: { passed: { type: integer }, summary: { type: string } } }
jobs:
  dev: { worker: dev, input: "Add triple." }
YAML
export MOCK_KEY=sk-replaynight
run=$("$NS" run "$T/proj/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the night runs against the stateless mock" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
kill $MOCKPID; wait $MOCKPID 2>/dev/null
unset MOCK_KEY
check "the night's pytest ran 32 tests" bash -c "zstd -dc '$run/jobs/dev/events.jsonl.zst' | grep -q '32 passed in'"
check "the night's git status rewrote the index in the record" test -s "$P/.git/index"

new=$("$NS" replay "$run" --out "$T/replays" 2>"$T/rerr"); rc=$?
expect_rc "replay of the night: exit 0" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/rerr"
# step 5 prints date +%s%N: its output differs in every replay (pytest's timing may agree by chance)
expect_grep "the drift is listed: the step printing the time" "^job dev, step 5: .*drift" "$T/rerr"
expect_grep "the drift is counted" "replay: 5 steps compared: 0 diverged, [1-9][0-9]* drifted" "$T/rerr"
expect_grep "the workspace is named" "replay: workspace ws restored from the first snapshot" "$T/rerr"
check "replayed output.json is byte-identical" cmp "$run/jobs/dev/output.json" "$new/jobs/dev/output.json"

# The end workspaces: every path the .gitignore keeps, by kind, mode and content; the index by
# the entries it lists (git ls-files -s), not its bytes (times and inodes).
state() {
	(cd "$1" && find . -mindepth 1 ! -path ./.git/index -printf '%P\n' | LC_ALL=C sort | while IFS= read -r p; do
		case "$p" in .git | .git/*) ;; *) git check-ignore -q --no-index -- "$p" && continue ;; esac
		if [ -f "$p" ] && [ ! -L "$p" ]; then h=$(sha256sum <"$p" | cut -c1-16); else h=-; fi
		printf '%s %s %s\n' "$(stat -c '%F %a' -- "$p")" "$h" "$p"
	done
	echo "index:"; git ls-files -s)
}
"$NS" restore "$run" --step end --to "$T/end.rec" 2>/dev/null
"$NS" restore "$new" --step end --to "$T/end.rep" 2>/dev/null
state "$T/end.rec" >"$T/state.rec"
state "$T/end.rep" >"$T/state.rep"
check "the end workspace holds the night's work" grep -q "src/calc/extra.py" "$T/state.rec"
check "and its index lists it" grep -q "src/calc/extra.py" "$T/state.rec"
expect_eq "the replayed end workspace equals the recorded one" "" "$(diff "$T/state.rec" "$T/state.rep")"
check "the index bytes differ (stat data), yet no divergence" bash -c "! cmp -s '$T/end.rec/.git/index' '$T/end.rep/.git/index'"
expect_eq "the workspace folder comes back with its mode" "751 751" \
	"$(stat -c %a "$T/end.rec") $("$NS" restore "$new" --step 1 --to "$T/s1.rep" 2>/dev/null; stat -c %a "$T/s1.rep")"
expect_eq "and its time" "$(stat -c %Y "$P/../ws/src")" "$(stat -c %Y "$T/s1.rep/src")"

"$NS" replay "$run" --strict --out "$T/replays" >/dev/null 2>"$T/rerr"; rc=$?
expect_rc "the same replay under --strict: exit 4" 4 "$rc"
expect_grep "--strict names the step" "replay diverged \(--strict.*\): job dev, step 1: other output" "$T/rerr"
expect_eq "no replay workspace is left" "" "$(ls -d "$T"/replays/replay-workspace-* 2>/dev/null)"

# A step that copies what a mounted input holds: the input changes, the step's effect does.
M=$T/mnt
mkdir -p "$M/ws" "$M/data"
printf 'one\ntwo\nthree\n' >"$M/data/input.txt"
cat >"$M/m.yaml" <<'YAML'
version: 1
workspace: ws
sandbox: { mounts: [ { source: ./data, target: /data, mode: ro } ] }
models:
  d: { provider: scripted, replies: [ {tool_calls: [ {name: shell, arguments: {command: "cp /data/input.txt copy.txt && date +%s%N"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: d, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  copy: { worker: w }
YAML
mrun=$("$NS" run "$M/m.yaml" --out "$M/runs" 2>"$T/err"); rc=$?
expect_rc "the night with a mounted input runs" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
"$NS" replay "$mrun" --manifest "$M/m.yaml" --out "$M/replays" >/dev/null 2>"$T/rerr"; rc=$?
expect_rc "replay --manifest with the input unchanged: exit 0" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/rerr"
printf 'one\nTWO\nthree\n' >"$M/data/input.txt"
"$NS" replay "$mrun" --manifest "$M/m.yaml" --out "$M/replays" >/dev/null 2>"$T/rerr"; rc=$?
expect_rc "the input changed: exit 4" 4 "$rc"
expect_grep "names the job and the step" "replay diverged: job copy, step 1: another change to the workspace" "$T/rerr"
expect_grep "names the file" "file copy.txt: recorded added \(file, mode 0644\), replayed added \(file, mode 0644\)" "$T/rerr"
expect_grep "with a text diff: the recorded line" "^ +-two$" "$T/rerr"
expect_grep "with a text diff: the replayed line" "^ +\+TWO$" "$T/rerr"
done_tests
