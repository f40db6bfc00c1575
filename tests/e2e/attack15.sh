#!/usr/bin/env bash
# attack15: a merged run handed to `audit --verify` is hostile.
# A merged run keeps a copy of the manifest its shards ran under manifest/ (replay, --resume and
# policy read it as the run's manifest), but verification held that copy to run.json's
# manifest.sha256 only for runs that were not merged. Rules widened in the copy (a shell rule
# "ls" made "*") with SHA256SUMS written again, no chain touched: `audit --verify` said "verified",
# exit 0. Now the copy is held to the digest as in any run (exit 4), and each shard's manifest
# digest to the top's, so the top's digest rewritten and its one-line log resealed is named too.
# 3. A layer of a run is held to an event's digest only when an event names it: a layer added
#    between steps (snapshots/0009.tar.zst holding evil.txt) or an end.tar.zst swapped for one of
#    the attacker's, SHA256SUMS written again, was "verified", while `restore --step end` and
#    `diff --job` put evil.txt in the workspace and the job's patch. Now run.json's sealed_layers
#    lists the layers no event records (end layers, carried ones) with their digests, and every
#    file under snapshots/ must be one of those or an event's.
source "$(dirname "$0")/lib.sh"
if ! command -v python3 >/dev/null || ! command -v zstd >/dev/null; then
	skip attack15 "python3 and zstd are needed"; done_tests; exit
fi
mkdir -p "$T/src/ws" && echo seed >"$T/src/ws/seed.txt"
cat >"$T/src/m.yaml" <<'YAML'
version: 1
workspace: ws
sandbox: { backend: none }
models:
  s: { provider: scripted, replies: [
    {tool_calls: [ {name: shell, arguments: {command: "ls"}} ]},
    {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w:
    model: s
    instructions: x
    tools: [shell]
    approval: { rules: [ { tool: shell, command: ls, decision: allow } ] }
jobs:
  a: { worker: w }
  b: { worker: w }
YAML
for i in 1 2; do
	cp -r "$T/src" "$T/s$i"
	"$NS" run "$T/s$i/m.yaml" --shard $i/2 --quiet >"$T/s$i.out" 2>"$T/s$i.err"
	expect_rc "shard $i runs" 0 $?
done
"$NS" merge "$(cat "$T/s1.out")" "$(cat "$T/s2.out")" --out "$T/merged" >"$T/merge.out" 2>"$T/merge.err"
expect_rc "merge" 0 $?
M=$(cat "$T/merge.out")
"$NS" audit --verify "$M" >/dev/null 2>"$T/ok.err"
expect_rc "the merged run verifies" 0 $?

resum() { (cd "$1" && find . -type f ! -path ./SHA256SUMS | sed 's|^./||' | sort | xargs sha256sum >SHA256SUMS); }

# 1. the manifest copy's rule widened, SHA256SUMS written again
cp -r "$M" "$T/wide"
sed -i 's/command: ls, decision: allow/command: "*", decision: allow/' "$T/wide/manifest/m.yaml"
check "the copy was changed" grep -q 'command: "\*"' "$T/wide/manifest/m.yaml"
resum "$T/wide"
"$NS" audit --verify "$T/wide" >"$T/wide.out" 2>&1
expect_rc "a widened manifest copy: audit --verify" 4 $?
expect_grep "it names the copy" 'run.json: manifest.sha256 is [0-9a-f]{16}\.\.\., manifest/m.yaml has' "$T/wide.out"

# 2. the same, with run.json's manifest digest made to agree and the run's own log resealed
cp -r "$T/wide" "$T/resealed"
python3 - "$T/resealed" <<'PY'
import hashlib, json, os, subprocess, sys
run = sys.argv[1]
sha = lambda b: hashlib.sha256(b).hexdigest()
rj = json.load(open(os.path.join(run, "run.json")))
rj["manifest"]["sha256"] = sha(open(os.path.join(run, "manifest/m.yaml"), "rb").read())
log = os.path.join(run, "events.jsonl.zst")
ev = json.loads(subprocess.run(["zstd", "-dcq", log], capture_output=True, check=True).stdout.split(b"\n")[0])
body = {k: ev[k] for k in ("seq", "time", "type", "prev")}
body.update({k: v for k, v in rj.items() if k not in ("events", "events_head")})
line = json.dumps(body, separators=(",", ":")).encode()
subprocess.run(["zstd", "-qf", "-o", log], input=line + b"\n", check=True)
rj["events_head"] = sha(line)
json.dump(rj, open(os.path.join(run, "run.json"), "w"), indent="\t")
PY
resum "$T/resealed"
"$NS" audit --verify "$T/resealed" >"$T/resealed.out" 2>&1
expect_rc "a resealed top digest: audit --verify" 4 $?
expect_grep "it names the shard that ran another manifest" \
	'run.json: manifest.sha256 is [0-9a-f]{16}\.\.\., shards/[^/]+/run.json ran [0-9a-f]{16}' "$T/resealed.out"
expect_nogrep "no other problem hides it" 'events.jsonl.zst|SHA256SUMS:' "$T/resealed.out"

# 3. layers: one run's chain, a layer added between its steps, its end layer swapped
"$NS" run "$T/src/m.yaml" --out "$T/runs" --quiet >"$T/one.out" 2>"$T/one.err"
expect_rc "one run" 0 $?
ONE=$(cat "$T/one.out")
expect_grep "run.json seals the end layer's digest" '"snapshots/end.tar.zst":[[:space:]]*"[0-9a-f]{64}"' "$ONE/run.json"
printf 'f evil.txt 0644 INJECTED\n' | python3 "$ROOT/tests/e2e/craft.py" | zstd -q >"$T/evil.tar.zst"
cp -r "$ONE" "$T/added"
cp "$T/evil.tar.zst" "$T/added/snapshots/0009.tar.zst"
resum "$T/added"
"$NS" audit --verify "$T/added" >"$T/added.out" 2>&1
expect_rc "a layer added: audit --verify" 4 $?
expect_grep "it names the layer" '^snapshots/0009.tar.zst: a layer no event .* records \(added\)' "$T/added.out"
cp -r "$ONE" "$T/swapped"
cp "$T/evil.tar.zst" "$T/swapped/snapshots/end.tar.zst"
resum "$T/swapped"
"$NS" audit --verify "$T/swapped" >"$T/swapped.out" 2>&1
expect_rc "an end layer swapped: audit --verify" 4 $?
expect_grep "it names the end layer" "^snapshots/end.tar.zst: digest differs from run.json's sealed_layers" "$T/swapped.out"
cp -r "$ONE" "$T/gone"
rm "$T/gone/snapshots/end.tar.zst"
resum "$T/gone"
"$NS" audit --verify "$T/gone" >"$T/gone.out" 2>&1
expect_rc "an end layer removed: audit --verify" 4 $?
expect_grep "it names the missing layer (a gap: INCOMPLETE, as before)" "snapshots/end.tar.zst: missing: the workspace after the last step was not stored" "$T/gone.out"
# a resumed run: the layers it carried are sealed too, and it verifies as made
"$NS" run "$T/src/m.yaml" --out "$T/runs" --resume "$ONE" --quiet >"$T/res.out" 2>"$T/res.err"
expect_rc "a run resumed" 0 $?
"$NS" audit --verify "$(cat "$T/res.out")" >"$T/res.verify" 2>&1
expect_rc "the resumed run verifies" 0 $?
done_tests
