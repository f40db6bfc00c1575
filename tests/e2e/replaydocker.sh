#!/usr/bin/env bash
# replaydocker: replay by effects on the docker backend (an engine started as tests/dockerenv.sh
# does; SKIPPED loudly where none can be). A night in the busybox test image whose steps print
# `ls -la`, dates and pids and write files: replay (docker stays docker) exits 0 with the drift
# listed, output.json identical, the end workspace equal; --strict exits 4. A step that copies a
# mounted input: the input changed, replay --manifest exits 4 naming the step and the file.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/dockerenv.sh"
trap 'docker_down; rm -rf "$T"' EXIT

if ! docker_up "$T"; then
	skip replaydocker "$DOCKER_WHY"
	done_tests
	exit
fi
[ -n "$DOCKER_STARTED" ] && echo "started dockerd (pid $DOCKER_STARTED) for these tests"

mkdir -p "$T/ws/src" "$T/data"
printf 'one\ntwo\n' >"$T/ws/src/a.txt"
printf 'input v1\n' >"$T/data/input.txt"
chmod 0777 "$T/ws"  # the steps run as uid 1000; owners are not part of a snapshot, modes are
cat >"$T/m.yaml" <<YAML
version: 1
workspace: ws
sandbox:
  backend: docker
  image: $DOCKER_IMAGE
  network: none
  mounts: [ { source: ./data, target: /data, mode: ro } ]
models:
  d:
    provider: scripted
    replies:
      - tool_calls: [ { name: shell, arguments: { command: "ls -la /workspace; date; echo pid \$\$; cat /proc/sys/kernel/random/uuid" } } ]
      - tool_calls: [ { name: shell, arguments: { command: "mkdir -p out && sort -r src/a.txt > out/sorted.txt && cp /data/input.txt out/input.txt && date +%s" } } ]
      - tool_calls: [ { name: write_file, arguments: { path: out/note.md, content: "done\n" } } ]
      - tool_calls: [ { name: final_result, arguments: { files: 3 } } ]
workers:
  w: { model: d, instructions: x, tools: [shell, write_file], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
run=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the night runs in docker" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"

new=$("$NS" replay "$run" --manifest "$T/m.yaml" --out "$T/replays" 2>"$T/rerr"); rc=$?
expect_rc "replay in docker: exit 0" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/rerr"
expect_grep "the drift is listed" "^job j, step 1: other output \(drift" "$T/rerr"
expect_grep "no divergence" "replay: 3 steps compared: 0 diverged, [12] drifted" "$T/rerr"
check "output.json is byte-identical" cmp "$run/jobs/j/output.json" "$new/jobs/j/output.json"
state() { (cd "$1" && find . -printf '%y %m %P\n' | LC_ALL=C sort && find . -type f -exec sha256sum {} + | LC_ALL=C sort -k2); }
"$NS" restore "$run" --step end --to "$T/end.rec" 2>/dev/null
"$NS" restore "$new" --step end --to "$T/end.rep" 2>/dev/null
check "the end workspace holds the night's work" test -s "$T/end.rec/out/sorted.txt"
expect_eq "the replayed end workspace equals the recorded one" "" "$(diff <(state "$T/end.rec") <(state "$T/end.rep"))"
"$NS" replay "$run" --manifest "$T/m.yaml" --strict --out "$T/replays" >/dev/null 2>"$T/rerr"; rc=$?
expect_rc "--strict: exit 4" 4 "$rc"

printf 'input v2\n' >"$T/data/input.txt"
"$NS" replay "$run" --manifest "$T/m.yaml" --out "$T/replays" >/dev/null 2>"$T/rerr"; rc=$?
expect_rc "the mounted input changed: exit 4" 4 "$rc"
expect_grep "names the step" "replay diverged: job j, step 2: another change to the workspace" "$T/rerr"
expect_grep "and the file" "file out/input.txt: recorded added" "$T/rerr"
expect_grep "with a text diff" "^ +\+input v2$" "$T/rerr"
done_tests
