#!/usr/bin/env bash
# replayforge: a record is a stranger's, and a forger rewrites what is unsigned (the manifest copy,
# run.json, SHA256SUMS). Whatever it names, replay works only in folders of its own and reads only
# the files the record holds: a job's workspace is never a host folder (with or without
# --manifest, with or without `workspaces` in run.json), a worker file, a script or a skills
# folder outside RUN/manifest/ is never read, /dev/zero is no file, and the record's inputs never
# reach the user's --manifest.
source "$(dirname "$0")/lib.sh"
mkdir -p "$T/proj/ws" "$T/victim" "$T/outside"
echo keep > "$T/victim/keep.txt"
echo data > "$T/proj/ws/a.txt"
echo "SECRET-OUTSIDE-9f3a" > "$T/outside/w.md"
mkdir -p "$T/outside/skill"
printf -- '---\nname: hostskill\ndescription: SKILL-OUTSIDE-77c1\n---\nbody\n' > "$T/outside/skill/SKILL.md"
reply='{tool_calls: [ {name: shell, arguments: {command: "echo pwned > b.txt"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]}'
cat > "$T/proj/m.yaml" <<YAML
version: 1
workspace: ws
models:
  d: { provider: scripted, replies: [ $reply ] }
workers:
  w: { model: d, instructions: "x \${{ inputs.url }}", tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
run=$("$NS" run "$T/proj/m.yaml" --out "$T/runs" --set url=http://attacker.invalid/ 2>"$T/err")
check "the honest night is recorded" test -f "$run/run.json"

# forge NAME MANIFEST: a copy of the record with its manifest replaced, resealed (unsigned)
forge() {
	rm -rf "$T/$1"; cp -r "$run" "$T/$1"
	printf '%s\n' "$2" > "$T/$1/manifest/m.yaml"
	python3 - "$T/$1" <<'PY'
import hashlib, json, os, sys
d = sys.argv[1]
r = json.load(open(d + "/run.json"))
r["manifest"]["sha256"] = hashlib.sha256(open(d + "/manifest/m.yaml", "rb").read()).hexdigest()
r.pop("workspaces", None)
json.dump(r, open(d + "/run.json", "w"))
PY
	(cd "$T/$1" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | sort | xargs sha256sum > "$T/sums" && mv "$T/sums" SHA256SUMS)
}
victimsame() { [ "$(ls -A "$T/victim")" = keep.txt ]; }

# 1. a job's workspace at a host folder, run.json without `workspaces`: the step runs in the
#    replay's own folder, the host folder is untouched
forge f1 "version: 1
workspace: ws
models:
  d: { provider: scripted, replies: [ $reply ] }
workers:
  w: { model: d, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w, workspace: $T/victim }"
"$NS" replay "$T/f1" --out "$T/o1" >"$T/out" 2>"$T/err"
check "a forged job workspace: the host folder is untouched" victimsame
check "the step ran (in the replay's folder)" grep -q 'step 1: shell' "$T/err"
expect_eq "the replay's folders are gone after it" "" "$(ls -d "$T"/o1/replay-workspace-* 2>/dev/null)"

# 2. the same with --manifest: the user's manifest names a real folder for a job; a record that
#    lacks `workspaces` still never makes the replay work in it
mkdir -p "$T/mine/ws" "$T/mine/real"; echo mine > "$T/mine/real/keep.txt"
cat > "$T/mine/m.yaml" <<YAML
version: 1
workspace: ws
models:
  d: { provider: scripted, replies: [ $reply ] }
workers:
  w: { model: d, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w, workspace: real }
YAML
"$NS" replay "$T/f1" --manifest "$T/mine/m.yaml" --out "$T/o2" >"$T/out" 2>"$T/err"
expect_eq "--manifest: the user's real job folder is untouched" keep.txt "$(ls -A "$T/mine/real")"
check "--manifest: the step ran" grep -q 'step 1: shell' "$T/err"
check "--manifest: the record's victim is untouched too" victimsame

# 3. a worker file outside the record (absolute, and by ..): never read; the record's own copy
#    of that name would be, and here there is none
for f in "$T/outside/w.md" "../../outside/w.md"; do
	forge f3 "version: 1
workspace: ws
models:
  d: { provider: scripted, replies: [ $reply ] }
workers:
  w: { model: d, file: $f, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }"
	"$NS" replay "$T/f3" --out "$T/o3" >"$T/out" 2>"$T/err"; rc=$?
	expect_rc "worker file $f outside the record: refused" 2 $rc
	expect_grep "it names the record's folder" "cannot read worker file $T/f3/manifest/w.md" "$T/err"
	check "nothing of the outside file in what was made" bash -c "! grep -rqs SECRET-OUTSIDE '$T/o3' '$T/err'"
done
printf -- '---\ninstructions_from: record\n---\nRECORD-COPY-instr\n' > "$T/f3/manifest/w.md"
printf -- 'RECORD-COPY-instr\n' > "$T/f3/manifest/w.md"
(cd "$T/f3" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | sort | xargs sha256sum > "$T/sums" && mv "$T/sums" SHA256SUMS)
"$NS" replay "$T/f3" --out "$T/o3b" >"$T/out" 2>"$T/err"; rc=$?
expect_rc "the record's own copy of the worker file is read" 0 $rc

# 4. /dev/zero as a worker file: refused at once (the record's folder has no "zero"), and as the
#    user's own file: refused past the size cap, not read forever
forge f4 "version: 1
workspace: ws
models:
  d: { provider: scripted, replies: [ $reply ] }
workers:
  w: { model: d, file: /dev/zero }
jobs:
  j: { worker: w }"
timeout 60 "$NS" replay "$T/f4" --out "$T/o4" >"$T/out" 2>"$T/err"; rc=$?
expect_rc "a record's /dev/zero worker file: exit 2" 2 $rc
cat > "$T/proj/z.yaml" <<YAML
version: 1
workspace: ws
models: { d: { provider: scripted, replies: [ $reply ] } }
workers: { w: { model: d, file: /dev/zero } }
jobs: { j: { worker: w } }
YAML
timeout 60 "$NS" run "$T/proj/z.yaml" --out "$T/runs" >"$T/out" 2>"$T/err"; rc=$?
expect_rc "the user's own /dev/zero worker file: exit 2, not read forever" 2 $rc
expect_grep "it says the cap" "larger than [0-9]* bytes" "$T/err"

# 5. a link in the record's manifest folder to a file outside: not followed
forge f5 "version: 1
workspace: ws
models:
  d: { provider: scripted, replies: [ $reply ] }
workers:
  w: { model: d, file: w.md }
jobs:
  j: { worker: w }"
ln -s "$T/outside/w.md" "$T/f5/manifest/w.md"
"$NS" replay "$T/f5" --out "$T/o5" >"$T/out" 2>"$T/err"; rc=$?
expect_rc "a link in the record's manifest folder: refused as verify refuses it (exit 4)" 4 $rc
expect_grep "it names the link" "manifest/w.md: a symbolic link" "$T/err"
check "the linked file is not read" bash -c "! grep -rqs SECRET-OUTSIDE '$T/o5' '$T/err'"

# 6. a scripted model's script outside the record: not read
printf -- '- tool_calls: [ {name: final_result, arguments: {}} ]\n' > "$T/outside/script.yaml"
forge f6 "version: 1
workspace: ws
models:
  d: { provider: scripted, script: $T/outside/script.yaml }
workers:
  w: { model: d, instructions: x }
jobs:
  j: { worker: w }"
"$NS" replay "$T/f6" --out "$T/o6" >"$T/out" 2>"$T/err"; rc=$?
expect_rc "a script outside the record: refused" 2 $rc
expect_grep "named in the record's folder" "$T/f6/manifest/script.yaml" "$T/err"

# 7. a skills folder of the host: not read, not mounted, said
forge f7 "version: 1
workspace: ws
models:
  d: { provider: scripted, replies: [ $reply ] }
workers:
  w: { model: d, instructions: x, tools: [shell], skills: [ $T/outside/skill ], approval: { default: allow } }
jobs:
  j: { worker: w }"
"$NS" replay "$T/f7" --out "$T/o7" >"$T/out" 2>"$T/err"; rc=$?
expect_grep "the skills folder is said not read" "skills folder .*outside/skill is not read" "$T/err"
new=$(cat "$T/out")
check "its SKILL.md reaches nothing the replay made" bash -c "! (cd '$new' && for f in \$(find . -name '*.zst'); do zstd -dcq \"\$f\"; done; cat run.json) | grep -q SKILL-OUTSIDE"

# 8. the record's inputs are not given to --manifest; --set gives the user's
cat > "$T/mine/i.yaml" <<YAML
version: 1
workspace: ws
models:
  d: { provider: scripted, replies: [ $reply ] }
workers:
  w: { model: d, instructions: "x \${{ inputs.url }}", tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
mkdir -p "$T/o8"
"$NS" replay "$run" --manifest "$T/mine/i.yaml" --out "$T/o8" >"$T/out" 2>"$T/err"; rc=$?
expect_rc "the record's input is not given to --manifest: the input is unset, exit 2" 2 $rc
expect_grep "the record's inputs are said not given" "record's inputs \\(url\\) are not given to --manifest" "$T/err"
expect_grep "and how to give one" "input 'url' is not set \\(pass --set url=VALUE\\)" "$T/err"
check "the record's value reaches nothing" bash -c "! grep -rqs attacker.invalid '$T/o8' '$T/err'"
"$NS" replay "$run" --manifest "$T/mine/i.yaml" --set url=from-flag --out "$T/o8" >"$T/out" 2>"$T/err"
new=$(cat "$T/out")
check "--set gives the user's value" grep -Eq '"url":[[:space:]]*"from-flag"' "$new/run.json"
check "and the record's reaches nothing" bash -c "! (cd '$new' && for f in \$(find . -name '*.zst'); do zstd -dcq \"\$f\"; done; cat run.json) | grep -q attacker.invalid"
"$NS" replay "$run" --set url --out "$T/o8" >"$T/out" 2>"$T/err"; rc=$?
expect_rc "--set without = is a usage error" 2 $rc
# without --manifest the record's own inputs still serve its own manifest
"$NS" replay "$run" --out "$T/o8" >"$T/out" 2>"$T/err"; rc=$?
expect_rc "a plain replay of the honest record still matches" 0 $rc

# 9. the record's --model overrides never reach --manifest: a scripted model's file on the host
#    (a fifo would hold the replay forever) is not opened
mkfifo "$T/outside/fifo"
rm -rf "$T/f9"; cp -r "$run" "$T/f9"
python3 - "$T/f9" "$T/outside/fifo" <<'PY'
import json, sys
d, fifo = sys.argv[1], sys.argv[2]
r = json.load(open(d + "/run.json"))
r["model_overrides"] = ["d=scripted:" + fifo]
json.dump(r, open(d + "/run.json", "w"))
PY
(cd "$T/f9" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | sort | xargs sha256sum > "$T/sums" && mv "$T/sums" SHA256SUMS)
timeout 60 "$NS" replay "$T/f9" --manifest "$T/mine/i.yaml" --set url=x --out "$T/o9" >"$T/out" 2>"$T/err"; rc=$?
check "a record's --model with --manifest: the fifo is not opened (no hang)" test "$rc" != 124
expect_grep "it is said not taken" "record's --model d=scripted:.* is not taken with --manifest" "$T/err"

# 10. a record's sandbox paths (mounts, an image folder) are dropped without being looked up on
#     the host: one that does not exist here is no error
forge f10 "version: 1
workspace: ws
sandbox: { image: /nonexistent/img, mounts: [ { source: /nonexistent/src, target: /data } ] }
models:
  d: { provider: scripted, replies: [ $reply ] }
workers:
  w: { model: d, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }"
"$NS" replay "$T/f10" --out "$T/o10" >"$T/out" 2>"$T/err"; rc=$?
expect_nogrep "a record's sandbox paths are not looked up" "does not exist" "$T/err"
expect_grep "the mount is said not made" "mount /nonexistent/src -> /data is not made" "$T/err"
done_tests
