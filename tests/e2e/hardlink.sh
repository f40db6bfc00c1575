#!/usr/bin/env bash
# hardlink: a workspace file with a name outside the workspace (what uv, pnpm and git clone of a
# local path make) is reported at sandbox start and cannot be written through by a step. The
# attack: `echo PWNED > vendored.py` (a shell redirect, a plain open with O_TRUNC) where
# vendored.py is a hard link to a 0444 file outside the workspace; then chmod and append.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
needuserns hardlink
mkdir -p "$T/outside" "$T/ws/lib"
echo "original" > "$T/outside/store.py"
chmod 0444 "$T/outside/store.py"
ln "$T/outside/store.py" "$T/ws/lib/vendored.py"
echo "one" > "$T/ws/pair-a" && ln "$T/ws/pair-a" "$T/ws/pair-b" # both names inside: no report
cat > "$T/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  m:
    provider: scripted
    replies:
      - { tool_calls: [ { name: shell, arguments: { command: "echo PWNED > lib/vendored.py; echo rc=$?" } } ] }
      - { tool_calls: [ { name: shell, arguments: { command: "chmod 666 lib/vendored.py; printf more >> lib/vendored.py; truncate -s 0 lib/vendored.py; rm -f lib/vendored.py; mv lib lib2; cat lib/vendored.py lib2/vendored.py" } } ] }
      - { tool_calls: [ { name: shell, arguments: { command: "echo two > pair-a" } } ] }
      - { tool_calls: [ { name: write_file, arguments: { path: lib/vendored.py, content: "PWNED" } } ] }
      - { tool_calls: [ { name: final_result, arguments: {} } ] }
workers:
  w: { model: m, instructions: x, tools: [shell, write_file], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the run succeeds" 0 "$rc"
expect_eq "the file outside is unchanged" "original" "$(cat "$T/outside/store.py")"
expect_eq "its mode is unchanged" 444 "$(stat -c %a "$T/outside/store.py")"
expect_eq "it still has both names" 2 "$(stat -c %h "$T/outside/store.py")"
expect_eq "a pair linked only inside stays writable" "two" "$(cat "$T/ws/pair-b")"
expect_grep "a warning line names the file" "job j: warning: 1 workspace file has hard links outside the workspace \(lib/vendored.py\): read-only in its steps" "$T/err"
zstd -dcq "$dir/jobs/j/events.jsonl.zst" > "$T/events" 2>/dev/null
expect_grep "a hard_links event names it" '"type":"hard_links".*"paths":\["lib/vendored.py"\]' "$T/events"
expect_nogrep "the pair is not reported" 'pair-a' <(grep hard_links "$T/events")
expect_grep "write_file to it is denied" "lib/vendored.py is protected \(it has hard links outside the workspace\)" "$T/events"
expect_grep "the redirect failed in the step" 'Read-only file system' "$T/events"
"$NS" audit --verify "$dir" >/dev/null 2>&1
expect_rc "the run verifies" 0 $?
"$NS" report "$dir" --out "$T/r.html" >/dev/null 2>&1
expect_grep "the report says it in words" "warning: 1 workspace file has hard links outside the workspace" "$T/r.html"

# Many links (a pnpm store) past the cap would be too many mounts: the job fails saying how to
# break them, before any step runs.
mkdir -p "$T/many/ws/nm"
python3 - "$T/many" <<'PY'
import os, sys
for i in range(1, 4098):
    s = os.path.join(sys.argv[1], "s%d" % i)
    open(s, "w").close()
    os.link(s, os.path.join(sys.argv[1], "ws/nm/f%d" % i))
PY
sed -e 's/^workspace: ws/workspace: many\/ws/' "$T/m.yaml" > "$T/many.yaml"
dir=$("$NS" run "$T/many.yaml" --out "$T/runs" 2>"$T/err2"); rc=$?
expect_rc "a workspace with 4097 outside links fails its job" 1 "$rc"
expect_grep "the error says how to break the links" "4097 files with hard links outside it .*git clone --no-hardlinks" "$T/err2"
expect_eq "no step ran" "" "$(cat "$T/many/ws/nm/f1")"
done_tests
