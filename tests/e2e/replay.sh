#!/usr/bin/env bash
# replay: a night against the mock model rerun offline with no server and no key, its replies
# served by turn; a changed workspace shows as drift at the step that reads it (what it printed),
# a divergence under --strict, and a divergence where a step's exit status changes.
source "$(dirname "$0")/lib.sh"

mock() {  # mock SCRIPT_JSON: starts the server, sets PORT and MOCKLOG
	printf '%s' "$1" > "$T/script.json"
	MOCKLOG=$T/mock.log; : > "$MOCKLOG"; rm -f "$T/port"
	python3 "$ROOT/tests/mockmodel.py" "$T/script.json" "$T/port" "$MOCKLOG" & MOCKPID=$!
	waitfor 60 test -s "$T/port"
	PORT=$(cat "$T/port")
}
mkdir -p "$T/proj/ws"
printf 'one\ntwo\nthree\n' > "$T/proj/ws/notes.txt"
mock '[{"openai_calls": [["read_file", {"path": "notes.txt"}]]},
       {"openai_calls": [["shell", {"command": "wc -l notes.txt"}], ["shell", {"command": "rm notes.txt"}]]},
       {"openai_calls": [["write_file", {"path": "reports/r.md", "content": "three lines\n"}]]},
       {"openai_calls": [["final_result", {"lines": 3}]]}]'
cat > "$T/proj/m.yaml" <<YAML
version: 1
workspace: ws
models:
  default: { provider: openai, base_url: "http://127.0.0.1:$PORT/v1", model: mock-1, api_key_env: MOCK_KEY, retries: 0 }
workers:
  w:
    instructions: Count the lines of the notes.
    tools: [shell, read_file, write_file]
    approval:
      rules:
        - { tool: read_file, decision: allow }
        - { tool: write_file, path: "reports/**", decision: allow }
        - { tool: shell, command: "wc *", decision: allow }
    output: { type: object, required: [lines], properties: { lines: { type: integer } } }
jobs:
  j: { worker: w, input: "Count.", files: [reports/r.md] }
YAML
export MOCK_KEY=sk-replay-test-key
run=$("$NS" run "$T/proj/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the night runs against the mock" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
kill $MOCKPID; wait $MOCKPID 2>/dev/null
unset MOCK_KEY

new=$("$NS" replay "$run" --out "$T/replays" 2>"$T/err"); rc=$?
expect_rc "replay with the server stopped and no key: exit 0" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
expect_grep "replay says it matched" "replay matches the record" "$T/err"
check "identical output.json" cmp "$run/jobs/j/output.json" "$new/jobs/j/output.json"
check "identical declared files" cmp "$run/jobs/j/files/reports/r.md" "$new/jobs/j/files/reports/r.md"
expect_eq "run.json names the run it replays" "$run" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["replay_of"])' "$new/run.json")"
check "the replay run verifies" "$NS" audit "$new" --verify
expect_eq "the tools really ran: same decisions in the replay" \
	"$("$NS" audit "$run" --json | python3 -c 'import json,sys; print([(c["tool"], c["decision"], c["exit_code"]) for c in map(json.loads, sys.stdin)])')" \
	"$("$NS" audit "$new" --json | python3 -c 'import json,sys; print([(c["tool"], c["decision"], c["exit_code"]) for c in map(json.loads, sys.stdin)])')"

# the same from a .tar.zst of the run directory
tar --zstd -cf "$T/night.tar.zst" -C "$(dirname "$run")" "$(basename "$run")"
new2=$("$NS" replay "$T/night.tar.zst" --out "$T/replays" 2>"$T/err"); rc=$?
expect_rc "replay of a RUN.tar.zst: exit 0" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
check "replay of a RUN.tar.zst: identical output.json" cmp "$run/jobs/j/output.json" "$new2/jobs/j/output.json"
expect_eq "its run.json names the archive" "$T/night.tar.zst" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["replay_of"])' "$new2/run.json")"
check "audit --verify of the archive" "$NS" audit "$T/night.tar.zst" --verify
expect_eq "audit --json of the archive" 4 "$("$NS" audit "$T/night.tar.zst" --json | wc -l)"
check "nothing unpacked is left behind" bash -c "! ls -d \"\${TMPDIR:-/tmp}\"/nightshift-run.* 2>/dev/null | grep -q ."

# Change the file the first step reads, inside the first layer (keeping SHA256SUMS consistent).
cp -r "$run" "$T/edited"
mkdir "$T/layer" && tar --zstd -xf "$T/edited/snapshots/0001.tar.zst" -C "$T/layer"
echo four >> "$T/layer/notes.txt"
(cd "$T/layer" && tar --zstd -cf "$T/edited/snapshots/0001.tar.zst" *)
(cd "$T/edited" && sha256sum $(awk '{print $2}' SHA256SUMS) > SHA256SUMS)
"$NS" replay "$T/edited" --out "$T/replays" >/dev/null 2>"$T/err"; rc=$?
expect_rc "a changed workspace whose steps do the same: exit 0" 0 "$rc"
expect_grep "the drift names the step that read it" "^job j, step 1: other output \(drift" "$T/err"
expect_grep "and the one that counted it" "^job j, step 2: other output \(drift" "$T/err"
expect_grep "counted in the summary" "replay: 4 steps compared: 0 diverged, 2 drifted" "$T/err"
"$NS" replay "$T/edited" --strict --out "$T/replays" >/dev/null 2>"$T/err"; rc=$?
expect_rc "a changed workspace under --strict: exit 4" 4 "$rc"
expect_grep "the divergence names the step that read it" "replay diverged \(--strict.*\): job j, step 1: other output" "$T/err"

# --continue-live: a night that failed at its second turn (the key was revoked) is finished by
# the live model: turn 1 served from the record, turn 2 asked for real.
mkdir -p "$T/live/ws" && echo data > "$T/live/ws/d.txt"
mock '[{"openai_calls": [["read_file", {"path": "d.txt"}]]}, {"status": 401, "body": {"error": {"message": "key revoked"}}}]'
sed "s/127.0.0.1:[0-9]*/127.0.0.1:$PORT/; s/files: \[reports\/r.md\]//" "$T/proj/m.yaml" > "$T/live/m.yaml"
export MOCK_KEY=sk-live-test-key
failed=$("$NS" run "$T/live/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the night fails at turn 2" 1 "$rc"
kill $MOCKPID; wait $MOCKPID 2>/dev/null
mock '[{"openai_calls": [["final_result", {"lines": 1}]]}]'
# going live, the models are the user's own (--manifest), never the record's (e2e/replaytrust)
sed "s/127.0.0.1:[0-9]*/127.0.0.1:$PORT/" "$T/live/m.yaml" > "$T/live/mine.yaml"
"$NS" replay "$failed" --continue-live --manifest "$T/live/mine.yaml" --out "$T/replays" >"$T/out" 2>"$T/err"; rc=$?
kill $MOCKPID; wait $MOCKPID 2>/dev/null
expect_rc "--continue-live finishes the night" 0 "$rc"
expect_eq "the live model was asked once, for turn 2 only" 1 "$(wc -l < "$MOCKLOG")"
check "the finished output" grep -q "\"lines\":[[:space:]]*1" "$(cat "$T/out")/jobs/j/output.json"
unset MOCK_KEY

"$NS" replay "$T/nowhere" 2>"$T/err"; rc=$?
expect_rc "a missing run: usage error" 2 "$rc"
"$NS" replay 2>"$T/err"; rc=$?
expect_rc "no run: usage error" 2 "$rc"
"$NS" replay "$failed" --manifest "$T/live/nope.yaml" --out "$T/badmf" >"$T/out" 2>"$T/err"; rc=$?
expect_rc "--manifest of no file: usage error" 2 "$rc"
expect_grep "--manifest of no file: the flag and the file named" "--manifest $T/live/nope.yaml: No such file" "$T/err"
check "--manifest of no file: nothing restored, no --out made" test ! -e "$T/badmf"
"$NS" replay "$failed" --job nosuch --out "$T/badjob" >"$T/out" 2>"$T/err"; rc=$?
expect_rc "--job the record did not run: usage error" 2 "$rc"
expect_grep "--job the record did not run: the flag and the job named" "--job nosuch: .* ran no job of that name" "$T/err"
check "--job the record did not run: nothing restored, no --out made" test ! -e "$T/badjob"
# A divergence explains itself: the recorded and the replayed output as a text diff; a step that
# read a path snapshot.exclude leaves out is named as such; no replay-workspace-* is left behind.
mkdir -p "$T/ex/ws/cache" && printf 'alpha\nbeta\ngamma\n' > "$T/ex/ws/data.txt" && echo cached > "$T/ex/ws/cache/x.txt"
cat > "$T/ex/m.yaml" <<'YAML'
version: 1
workspace: ws
snapshot: { exclude: ["cache/**"] }
models:
  d: { provider: scripted, replies: [ {tool_calls: [ {name: shell, arguments: {command: "cat data.txt"}} ]}, {tool_calls: [ {name: shell, arguments: {command: "cat cache/x.txt"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: d, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
exrun=$("$NS" run "$T/ex/m.yaml" --out "$T/ex/runs" 2>"$T/err")
expect_rc "the night with an excluded cache runs" 0 $?
cp -r "$exrun" "$T/ex/edited" && rm -rf "$T/layer" && mkdir "$T/layer"
tar --zstd -xf "$T/ex/edited/snapshots/0001.tar.zst" -C "$T/layer"
printf 'alpha\nBETA\ngamma\n' > "$T/layer/data.txt"
(cd "$T/layer" && tar --zstd -cf "$T/ex/edited/snapshots/0001.tar.zst" *)
(cd "$T/ex/edited" && sha256sum $(awk '{print $2}' SHA256SUMS) > SHA256SUMS)
"$NS" replay "$T/ex/edited" --out "$T/ex/replays" >/dev/null 2>"$T/err"; rc=$?
expect_rc "changed output, and a step that read an excluded path: exit 4" 4 "$rc"
expect_grep "the changed output is drift" "^job j, step 1: other output \(drift" "$T/err"
expect_grep "the drift's text diff: the recorded line" "^ +-beta$" "$T/err"
expect_grep "the drift's text diff: the replayed line" "^ +\+BETA$" "$T/err"
"$NS" replay "$T/ex/edited" --strict --out "$T/ex/replays" >/dev/null 2>"$T/err"; rc=$?
expect_rc "changed output under --strict: exit 4" 4 "$rc"
expect_grep "names job, step and what differed" "replay diverged \(--strict.*\): job j, step 1: other output" "$T/err"
expect_grep "a text diff of the output: the recorded line" "^ +-beta$" "$T/err"
expect_grep "a text diff of the output: the replayed line" "^ +\+BETA$" "$T/err"
expect_grep "with context" "^ +  alpha$" "$T/err"
"$NS" replay "$exrun" --out "$T/ex/replays" >/dev/null 2>"$T/err"; rc=$?
expect_rc "a step that read an excluded path: exit 4" 4 "$rc"
expect_grep "names the step" "replay diverged: job j, step 2: another exit status" "$T/err"
expect_grep "the exit codes" "exit status: recorded exit 0, replayed exit 1" "$T/err"
expect_grep "names the excluded path as the cause" "used cache/x.txt, which snapshot.exclude leaves out" "$T/err"

# Attacks on the comparison's own surfaces. The workspace's .git/config would run a command from
# any git that reads it (core.fsmonitor, hooks): replay's .gitignore query never reads it. Changed
# paths with a newline and a leading "-" reach git through stdin only; a .gitignore'd file is no
# effect even when its bytes differ.
mkdir -p "$T/atk/ws/.git/hooks"
printf '[core]\n\tfsmonitor = touch %s/pwned-fsmonitor\n\thooksPath = %s/hooks\n' "$T" "$T" >"$T/atk/ws/.git/config"
printf 'ref: refs/heads/main\n' >"$T/atk/ws/.git/HEAD"
mkdir -p "$T/atk/ws/.git/objects" "$T/atk/ws/.git/refs" "$T/hooks"
printf '#!/bin/sh\ntouch %s/pwned-hook\n' "$T" >"$T/hooks/post-index-change" && chmod +x "$T/hooks/post-index-change"
printf '*.tmp\n' >"$T/atk/ws/.gitignore"
cat > "$T/atk/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  d: { provider: scripted, replies: [ {tool_calls: [ {name: shell, arguments: {command: "printf x > \"$(printf -- '-n\\nx')\"; printf y > -- ; date +%s%N > stamp.tmp"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: d, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
atk=$("$NS" run "$T/atk/m.yaml" --out "$T/atk/runs" 2>"$T/err"); rc=$?
expect_rc "the night with a hostile .git runs" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
"$NS" replay "$atk" --out "$T/atk/replays" >/dev/null 2>"$T/err"; rc=$?
expect_rc "replay: a .gitignore'd file whose bytes differ is no divergence" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
check "git ran no command of the workspace's config (fsmonitor)" test ! -e "$T/pwned-fsmonitor"
check "nor its hooks" test ! -e "$T/pwned-hook"
if command -v git >/dev/null; then
	# without .gitignore the stamp's differing bytes are an effect: proof the query above mattered
	cp -r "$atk" "$T/atk/noignore"
	rm -rf "$T/layer" && mkdir "$T/layer" && tar --zstd -xf "$T/atk/noignore/snapshots/0001.tar.zst" -C "$T/layer"
	rm "$T/layer/.gitignore"
	(cd "$T/layer" && tar --zstd -cf "$T/atk/noignore/snapshots/0001.tar.zst" $(ls -A))
	(cd "$T/atk/noignore" && sha256sum $(awk '{print $2}' SHA256SUMS) > SHA256SUMS)
	"$NS" replay "$T/atk/noignore" --out "$T/atk/replays" >/dev/null 2>"$T/err"; rc=$?
	expect_rc "without the .gitignore the stamp diverges" 4 "$rc"
	expect_grep "naming it" "file stamp.tmp: recorded added" "$T/err"
else
	skip "replay-noignore" "git is not installed: .gitignore is not read"
fi
# Modes are effects, of files and of folders: the record says the step set other modes than the
# replay's step does (its end layer edited, pax attributes kept): a divergence naming both.
mkdir -p "$T/modes/ws/d" && echo 'echo hi' >"$T/modes/ws/f.sh" && chmod 0755 "$T/modes/ws/d" && chmod 0644 "$T/modes/ws/f.sh"
cat > "$T/modes/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  d: { provider: scripted, replies: [ {tool_calls: [ {name: shell, arguments: {command: "chmod 700 d && chmod 755 f.sh"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: d, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
mrun=$("$NS" run "$T/modes/m.yaml" --out "$T/modes/runs" 2>"$T/err"); rc=$?
expect_rc "the night that changes modes runs" 0 "$rc"
cp -r "$mrun" "$T/modes/edited"
# (read from the run, written to the copy: one pipeline that read and wrote the same file raced)
zstd -q -dc "$mrun/snapshots/end.tar.zst" | python3 -c '
import sys, tarfile, io
src = tarfile.open(fileobj=io.BytesIO(sys.stdin.buffer.read()))
with tarfile.open(fileobj=sys.stdout.buffer, mode="w|", format=tarfile.PAX_FORMAT) as out:
    for m in src.getmembers():
        if m.name == "d": m.mode = 0o750
        if m.name == "f.sh": m.mode = 0o700
        out.addfile(m, src.extractfile(m) if m.isfile() else None)
' | zstd -q -f -o "$T/modes/edited/snapshots/end.tar.zst"
(cd "$T/modes/edited" && sha256sum $(awk '{print $2}' SHA256SUMS) > SHA256SUMS)
"$NS" replay "$T/modes/edited" --out "$T/modes/replays" >/dev/null 2>"$T/err"; rc=$?
expect_rc "the step set other modes than the record says: exit 4" 4 "$rc"
expect_grep "the file's mode" "file f.sh: recorded changed \(file, mode 0700\), replayed changed \(file, mode 0755\)" "$T/err"
expect_grep "the folder's mode" "directory d: recorded changed \(directory, mode 0750\), replayed changed \(directory, mode 0700\)" "$T/err"
"$NS" replay "$mrun" --out "$T/modes/replays" >/dev/null 2>"$T/err"; rc=$?
expect_rc "the same night replayed as it was: exit 0" 0 "$rc"

# A layer whose "." (the workspace folder itself) is not a directory is refused.
cp -r "$atk" "$T/atk/dotfile"
python3 - "$T/atk/dotfile/snapshots/0001.tar" <<'PY'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    i = tarfile.TarInfo(".")
    i.size = 1
    t.addfile(i, io.BytesIO(b"x"))
PY
zstd -q -f --rm "$T/atk/dotfile/snapshots/0001.tar" -o "$T/atk/dotfile/snapshots/0001.tar.zst"
(cd "$T/atk/dotfile" && sha256sum $(awk '{print $2}' SHA256SUMS) > SHA256SUMS)
"$NS" restore "$T/atk/dotfile" --step 1 --to "$T/atk/dotrestore" 2>"$T/err"; rc=$?
expect_rc "a layer whose . is a file: refused (exit 4)" 4 "$rc"
expect_grep "saying why" "the workspace folder itself, but not a directory" "$T/err"
expect_eq "no replay-workspace-* left behind, diverged or not" "" "$(ls -d "$T"/replays/replay-workspace-* "$T"/ex/replays/replay-workspace-* 2>/dev/null)"
done_tests
