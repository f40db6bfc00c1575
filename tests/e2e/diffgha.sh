#!/usr/bin/env bash
# diffgha: under GitHub Actions stdout is the step's log unless it is a regular file, and the runner
# takes a line opening with "::" (after whitespace) or holding "##[" for a workflow command. `diff
# RUN` (the whole patch) and `report --out -` print a workspace's and a model's text: through a pipe
# under Actions the patch comes with its commands broken (util/term.h termactionslog/TERM_ACTIONS)
# and report --out - is refused (exit 2); redirected to a file the patch stays exact (git apply).
source "$(dirname "$0")/lib.sh"
command -v git >/dev/null || { skip diffgha "git is not installed (ci/packages.txt has it)"; done_tests; exit; }
unset GITHUB_ACTIONS
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
mkdir -p "$T/p/ws"
printf 'top\n::error title=ci::x\nmid\nend\n' > "$T/p/ws/a.txt"
git -C "$T/p/ws" init -q && git -C "$T/p/ws" add -A && git -C "$T/p/ws" commit -qm start
cat > "$T/p/m.yaml" <<'YAML'
version: 1
workspace: ws
sandbox: { backend: none }
models:
  d:
    provider: scripted
    replies:
      - text: "plan\n::warning::from the model\n  ::error::indented\nx ##[group]g"
        tool_calls: [ {name: shell, arguments: {command: "sed -i 's/^mid$/+x ##[warning]y/' a.txt && printf '::notice::new\\n' > b.txt"}} ]
      - tool_calls: [ {name: final_result, arguments: {}} ]
workers:
  w: { model: d, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
run=$("$NS" run "$T/p/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the night that writes workflow commands runs" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"

cmdline() { grep -qE '^[[:space:]]*::[a-z-]+( [^:]*)?::|##\[' "$1"; }
for sel in "" "--job j"; do
	GITHUB_ACTIONS=true "$NS" diff "$run" $sel 2>"$T/d.err" | cat > "$T/pipe.out"
	check "diff $sel through a pipe under Actions shows the change" grep -q 'a.txt' "$T/pipe.out"
	check "diff $sel through a pipe under Actions: no line is a workflow command" bash -c "$(declare -f cmdline); ! cmdline '$T/pipe.out'"
	check "diff $sel: the commands shown broken" grep -qF ' %3A:error title=ci::x' "$T/pipe.out"
	GITHUB_ACTIONS=true "$NS" diff "$run" $sel > "$T/file.patch" 2>"$T/d.err"
	expect_rc "diff $sel to a file under Actions" 0 $?
	check "diff $sel to a file under Actions is the raw patch" grep -qF '+x ##[warning]y' "$T/file.patch"
	rm -rf "$T/co"; git clone -q "$T/p/ws" "$T/co"
	check "git apply --check takes the patch written to a file" git -C "$T/co" apply --check "$T/file.patch"
done
"$NS" diff "$run" | cat > "$T/plain.out"
check "outside Actions a pipe gets the raw patch" cmp -s "$T/plain.out" "$T/file.patch"

GITHUB_ACTIONS=true "$NS" report "$run" --out - 2>"$T/r.err" | cat > "$T/r.out"
expect_rc "report --out - to a pipe under Actions is refused" 2 "${PIPESTATUS[0]}"
check "it says why" grep -q "step's log" "$T/r.err"
check "nothing of the page reaches the log" bash -c "! test -s '$T/r.out' && ! grep -qE '^::warning::from' '$T/r.err'"
GITHUB_ACTIONS=true "$NS" report "$run" --out - > "$T/page.html" 2>"$T/r.err"
expect_rc "report --out - to a file under Actions" 0 $?
check "the page is whole" grep -q '</html>' "$T/page.html"
"$NS" report "$run" --out - 2>/dev/null | cat > "$T/page2.html"
check "outside Actions report --out - still writes to a pipe" grep -q '</html>' "$T/page2.html"
done_tests
