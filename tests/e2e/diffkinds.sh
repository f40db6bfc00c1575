#!/usr/bin/env bash
# diffkinds: diff's kinds of change from the layers: a path removed and made again as another type
# in one step is one change (M), a folder removed whole is one deletion (its files go with it), and
# a step that deletes many files shows each deletion (the table is not walked once a file).
source "$(dirname "$0")/lib.sh"
mkdir -p "$T/ws/d/sub" "$T/ws/e" "$T/ws/many"
echo a >"$T/ws/f"; echo b >"$T/ws/d/sub/x"; echo c >"$T/ws/d/y"; echo k >"$T/ws/e/k"; echo g >"$T/ws/g"
for i in $(seq 1 3000); do echo "$i" >"$T/ws/many/m$i"; done
cat >"$T/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  s: { provider: scripted, replies: [
    {tool_calls: [ {name: shell, arguments: {command: "rm f && mkdir f && echo in > f/z; rm -r d; echo now-a-file > d; rm e/k; echo new > n"}} ]},
    {tool_calls: [ {name: shell, arguments: {command: "rm -r f; echo back > f; rm -r e; rm g; find many -type f -delete"}} ]},
    {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: s, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the run" 0 "$rc"; [ "$rc" = 0 ] || cat "$T/err"
"$NS" diff "$dir" --step 1 >"$T/d1" 2>&1
expect_rc "diff --step 1" 0 $?
expect_grep "a file made a folder: one change" "^M f \(directory" "$T/d1"
expect_grep "a folder made a file: one change" "^M d " "$T/d1"
expect_nogrep "what was in the folder goes with it, unlisted" "d/sub|d/y" "$T/d1"
expect_grep "the file in the new folder" "^\+\+\+ b/f/z" "$T/d1"
expect_grep "a deleted file" "^--- a/e/k" "$T/d1"
expect_grep "five changes" "^# step 1: 5 changes" "$T/d1"
"$NS" diff "$dir" --step 2 >"$T/d2" 2>&1
expect_rc "diff --step 2" 0 $?
expect_grep "a folder removed whole" "^D e \(directory" "$T/d2"
expect_grep "back to a file" "^M f \(" "$T/d2"
expect_eq "each of the 3000 deleted files" 3000 "$(grep -c '^--- a/many/m' "$T/d2")"
expect_grep "and the count says so: 3000 + e, f, g" "3003 changes" "$T/d2"
done_tests
