#!/usr/bin/env bash
# ci/action.yml's patch step, run as the composite action runs it: a night's change gives the
# patch output; a night that changed nothing gives none and succeeds; a patch that cannot be made
# fails the step with an error annotation and no output, never passing for "changed nothing".
source "$(dirname "$0")/lib.sh"
step=$T/patchstep.sh
python3 - "$ROOT/ci/action.yml" "$step" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"- name: Write the night's change as a patch\n(?:.*\n)*?      run: \|\n((?:        .*\n|\n)+)", text)
open(sys.argv[2], "w").write("set -e\n" + "".join(l[8:] + "\n" for l in m.group(1).splitlines()))
PY
check "the step's script is found in action.yml" grep -q 'nightshift diff' "$step"
mkdir -p "$T/ws" "$T/bin" "$T/tmp"
ln -s "$NS" "$T/bin/nightshift"
night() { # night NAME COMMAND: a run of one shell step
	cat > "$T/$1.yaml" <<YAML
version: 1
workspace: ws
models:
  m: { provider: scripted, replies: [ {tool_calls: [ {name: shell, arguments: {command: "$2"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
sandbox: { backend: none }
workers:
  w: { model: m, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w, input: go }
YAML
	"$NS" run "$T/$1.yaml" --out "$T/runs" 2>/dev/null
}
runstep() { # runstep RUN: the step's exit code; its output file in $T/out, its log in $T/log
	: > "$T/out"
	NS_RUN_DIR=$1 GITHUB_OUTPUT=$T/out RUNNER_TEMP=$T/tmp PATH="$T/bin:$PATH" bash "$step" > "$T/log" 2>&1
}
changed=$(night changed "echo hello > greeting.txt")
runstep "$changed"; expect_rc "a night that changed a file: the step succeeds" 0 $?
expect_grep "and sets the patch output" "^patch=$T/tmp/nightshift-changes.patch$" "$T/out"
expect_grep "which holds the change" "^\+hello$" "$T/tmp/nightshift-changes.patch"
same=$(night same "true")
runstep "$same"; expect_rc "a night that changed nothing: the step succeeds" 0 $?
expect_eq "and sets no patch output" "" "$(cat "$T/out")"
# a run whose layer was changed after it was sealed: diff refuses it (exit 4)
layer=$(ls "$changed"/snapshots/*.tar.zst | head -n 1)
printf 'x' >> "$layer"
runstep "$changed"; expect_rc "a patch that cannot be made: the step fails" 1 $?
expect_eq "no patch output, so nothing reads as 'changed nothing'" "" "$(cat "$T/out")"
expect_grep "an error annotation says so" "^::error title=nightshift::the night's change could not be written as a patch" "$T/log"
check "no half patch is left" test ! -e "$T/tmp/nightshift-changes.patch"
done_tests
