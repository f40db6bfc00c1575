#!/usr/bin/env bash
# Scale-out: plan → run each shard (as on separate machines: own checkout) → merge → audit --verify,
# and the merged run's outputs and job inputs equal those of one unsharded run. Then what merge and
# verify refuse, and --from across runs.
source "$(dirname "$0")/lib.sh"
json() { python3 -c 'import json,sys; d=json.load(sys.stdin)
for k in sys.argv[1:]: d = d[k]
print(d if isinstance(d, str) else json.dumps(d, sort_keys=True))' "$@"; }
# jobs/ID/output.json of every job, and each job's expanded input from its job_start event.
results() {  # RUN
	python3 - "$1" <<'EOF'
import glob, json, os, subprocess, sys
run = sys.argv[1]
info = json.load(open(os.path.join(run, "run.json")))
out = {}
for job, j in sorted(info["jobs"].items()):
    base = os.path.join(run, j.get("run", ""))
    ev = subprocess.run(["zstd", "-dcq", os.path.join(base, "jobs", job, "events.jsonl.zst")],
                        capture_output=True, text=True).stdout.splitlines()
    start = [json.loads(l) for l in ev if '"type":"job_start"' in l]
    out[job] = {"status": j["status"], "output": json.load(open(os.path.join(run, "jobs", job, "output.json"))),
                "input": start[0]["input"] if start else None}
print(json.dumps(out, sort_keys=True, indent=1))
EOF
}

# --- a manifest of 5 jobs: a <- b, {a, b} <- c; d <- e; each on its own scripted model ---
mkdir -p "$T/src/ws"
echo seed > "$T/src/ws/seed.txt"
python3 - "$T/src/m.yaml" <<'EOF'
import json, sys
jobs = {"a": [], "b": ["a"], "c": ["a", "b"], "d": [], "e": ["d"]}
m = {"version": 1, "name": "shards", "workspace": "ws",
     "sandbox": {"backend": "namespace", "network": "none", "timeout": "30s"},
     "models": {}, "workers": {}, "jobs": {}}
for j, needs in jobs.items():
    m["models"]["m" + j] = {"provider": "scripted", "replies": [
        {"tool_calls": [{"name": "shell", "arguments": {"command": "ls"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": f"out/{j}.txt", "content": j}}]},
        {"tool_calls": [{"name": "final_result", "arguments": {"word": "w-" + j, "n": ord(j)}}]}]}
    m["workers"]["w" + j] = {"model": "m" + j, "instructions": "Do it.", "tools": ["shell", "write_file"],
        "approval": {"rules": [{"tool": "shell", "command": "ls", "decision": "allow"},
                               {"tool": "write_file", "path": "out/**", "decision": "allow"}]},
        "output": {"type": "object", "required": ["word"],
                   "properties": {"word": {"type": "string"}, "n": {"type": "integer"}}}}
    m["jobs"][j] = {"worker": "w" + j, "input": "Go " + j + "".join(f" after ${{{{ jobs.{n}.output.word }}}}" for n in needs)}
    if needs:
        m["jobs"][j]["needs"] = needs
open(sys.argv[1], "w").write(json.dumps(m, indent=1))
EOF
checkout() { rm -rf "$T/$1"; cp -r "$T/src" "$T/$1"; }  # a runner's own checkout

# --- plan ---
"$NS" plan "$T/src/m.yaml" --shards 2 --json > "$T/plan2" 2>"$T/err"; rc=$?
expect_rc "plan --shards 2" 0 "$rc"
expect_eq "plan: one line on stdout" 1 "$(wc -l < "$T/plan2")"
expect_eq "plan: groups that respect needs" \
	'{"include":[{"shard":"1/2","index":1,"jobs":["a","b","c"]},{"shard":"2/2","index":2,"jobs":["d","e"]}]}' \
	"$(cat "$T/plan2")"
expect_eq "plan --shards 3: the empty group is left out" \
	'[["1/3", ["a", "b", "c"]], ["2/3", ["d", "e"]]]' \
	"$("$NS" plan "$T/src/m.yaml" --shards 3 --json | python3 -c 'import json,sys; print(json.dumps([[g["shard"], g["jobs"]] for g in json.load(sys.stdin)["include"]]))')"
expect_eq "plan --shards 1: everything" '{"include":[{"shard":"1/1","index":1,"jobs":["a","b","c","d","e"]}]}' \
	"$("$NS" plan "$T/src/m.yaml" --shards 1 --json)"
expect_eq "plan without --json: a line per group" "$(printf 'shard 1/2: a b c\nshard 2/2: d e')" \
	"$("$NS" plan "$T/src/m.yaml" --shards 2 2>/dev/null)"
"$NS" plan "$T/src/m.yaml" --shards 0 --json > /dev/null 2>&1
expect_rc "plan --shards 0 refused" 2 $?
"$NS" plan "$T/src/m.yaml" --json > /dev/null 2>&1
expect_rc "plan without --shards refused" 2 $?
"$NS" plan "$T/nope.yaml" --shards 2 > /dev/null 2>&1
expect_rc "plan of a missing manifest" 2 $?

# --- one unsharded run ---
checkout full
full=$("$NS" run "$T/full/m.yaml" --out "$T/runs-full" 2>"$T/err"); rc=$?
expect_rc "unsharded run" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"

# --- each shard on its own checkout, as the matrix would ---
if "$NS" run --help 2>/dev/null | grep -q -- '--shard'; then
	shardrun() { "$NS" run "$T/s$1/m.yaml" --shard "$1/2" --out "$T/runs-s$1"; }
else
	skip "run --shard I/N" "not wired into cmd/run.c yet; each shard runs as --job of its plan group instead"
	shardrun() {
		local args=()
		for j in $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["include"][int(sys.argv[2]) - 1]["jobs"]))' "$T/plan2" "$1"); do
			args+=(--job "$j")
		done
		"$NS" run "$T/s$1/m.yaml" "${args[@]}" --out "$T/runs-s$1"
	}
fi
shards=()
for i in 1 2; do
	checkout "s$i"
	d=$(shardrun "$i" 2>"$T/err"); rc=$?
	expect_rc "shard $i/2" 0 "$rc"
	[ "$rc" = 0 ] || cat "$T/err"
	shards+=("$d")
done
expect_eq "shard 1 ran a, b, c" '["a", "b", "c"]' "$(python3 -c 'import json,sys; print(json.dumps(sorted(json.load(open(sys.argv[1]))["jobs"])))' "${shards[0]}/run.json")"

# --- merge ---
merged=$("$NS" merge "${shards[@]}" --out "$T/merged" 2>"$T/err"); rc=$?
expect_rc "merge" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
expect_eq "merge prints one line, the new run directory" 1 "$(printf '%s\n' "$merged" | wc -l)"
rel=$(cd "$T" && "$NS" merge "${shards[@]}" --out merged-rel 2>/dev/null)
expect_eq "merge prints the absolute path, as run does, with a relative --out" "$T/merged-rel/" "${rel%/*}/"
"$NS" audit "$merged" --verify 2>"$T/verify"; rc=$?
expect_rc "audit --verify accepts the merged run" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/verify"
expect_grep "verify walked both shards' events and layers" 'verified: [0-9]+ files, [1-9][0-9]* events, [1-9][0-9]* layers' "$T/verify"
check "sha256sum -c passes at the top" bash -c "cd '$merged' && sha256sum -c --quiet SHA256SUMS"
for s in "$merged"/shards/*/; do
	check "sha256sum -c passes in $(basename "$s")" bash -c "cd '$s' && sha256sum -c --quiet SHA256SUMS"
	check "audit --verify accepts shard $(basename "$s") on its own" "$NS" audit "$s" --verify
done
expect_eq "merged status" succeeded "$(json status < "$merged/run.json")"
expect_eq "merged run lists 2 shards" 2 "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["shards"]))' "$merged/run.json")"
check "the manifest is at the top too" cmp "$merged/manifest/m.yaml" "$T/src/m.yaml"
results "$full" > "$T/full.json"
results "$merged" > "$T/merged.json"
check "sharded outputs and job inputs equal the unsharded run's" cmp "$T/full.json" "$T/merged.json"
expect_grep "c's input carries a's and b's outputs" '"input": "Go c after w-a after w-b"' "$T/merged.json"
sid=$(basename "$(ls -d "$merged"/shards/* | head -n1)")
check "the unsharded run made tool calls" test "$("$NS" audit "$full" --json | wc -l)" -gt 4
expect_eq "audit of the merged run lists the calls of every shard" \
	"$("$NS" audit "$full" --json | python3 -c 'import json,sys; print(sorted((c["job"], c["tool"], c["decision"]) for c in map(json.loads, sys.stdin)))')" \
	"$("$NS" audit "$merged" --json | python3 -c 'import json,sys; print(sorted((c["job"], c["tool"], c["decision"]) for c in map(json.loads, sys.stdin)))')"
check "restore works on a shard of the merged run" "$NS" restore "$merged/shards/$sid" --step 1 --to "$T/restored"

# --- what verify catches in a merged run ---
tamper() {  # NAME: copy the merged run to $T/tam
	rm -rf "$T/tam"; cp -r "$merged" "$T/tam"
}
resum() { (cd "$1" && find . -type f ! -path ./SHA256SUMS ! -name '*.tmp.*' | sed 's|^\./||' | LC_ALL=C sort | xargs -d '\n' sha256sum > SHA256SUMS); }
tamper; echo '{"word":"forged"}' > "$T/tam/jobs/a/output.json"; resum "$T/tam"
"$NS" audit "$T/tam" --verify 2>"$T/v"; expect_rc "an output changed at the top (sums redone) fails" 4 $?
expect_grep "it names the output" 'jobs/a/output.json: differs from the one in shards/' "$T/v"
tamper; s=$(ls -d "$T/tam"/shards/* | head -n1); printf 'x' >> "$s/snapshots/0002.tar.zst"; resum "$s"; resum "$T/tam"
"$NS" audit "$T/tam" --verify 2>"$T/v"; expect_rc "a shard's layer changed (all sums redone) fails" 4 $?
expect_grep "it names the layer" 'snapshots/0002.tar.zst: digest differs' "$T/v"
expect_grep "and the shard's SHA256SUMS no longer matches the pin" 'SHA256SUMS: digest differs from the one run.json pinned' "$T/v"
tamper; python3 - "$T/tam/run.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1])); r["jobs"]["a"]["run"] = "shards/../../etc"; json.dump(r, open(sys.argv[1], "w"))
EOF
resum "$T/tam"
"$NS" audit "$T/tam" --verify 2>"$T/v"; expect_rc "a job pointing out of the shards fails" 4 $?

# --- what merge refuses ---
"$NS" merge "${shards[0]}" "${shards[0]}" --out "$T/no" > /dev/null 2>"$T/v"
expect_rc "the same run twice" 2 $?
checkout other; echo "# changed" >> "$T/other/m.yaml"
o=$("$NS" run "$T/other/m.yaml" --job d --out "$T/runs-other" 2>/dev/null)
"$NS" merge "${shards[0]}" "$o" --out "$T/no" > /dev/null 2>"$T/v"
expect_rc "runs of another manifest" 2 $?
expect_grep "says so" 'ran different manifests' "$T/v"
"$NS" merge "${shards[@]}" "$full" --out "$T/no" > /dev/null 2>"$T/v"
expect_rc "a job run twice" 2 $?
expect_grep "names it" "job '[a-e]' ran in both" "$T/v"
rm -rf "$T/cut"; cp -r "${shards[1]}" "$T/cut"; rm "$T/cut/SHA256SUMS"
"$NS" merge "${shards[0]}" "$T/cut" --out "$T/no" > /dev/null 2>"$T/v"
expect_rc "a run that did not finish" 4 $?
rm -rf "$T/bad"; cp -r "${shards[1]}" "$T/bad"; echo '{}' > "$T/bad/jobs/d/output.json"
"$NS" merge "${shards[0]}" "$T/bad" --out "$T/no" > /dev/null 2>"$T/v"
expect_rc "a run that fails verification" 4 $?
"$NS" merge "$merged" --out "$T/no" > /dev/null 2>"$T/v"
expect_rc "a merged run" 2 $?
check "nothing half-made left behind" bash -c "[ ! -d '$T/no' ] || [ -z \"\$(ls -A '$T/no')\" ]"
"$NS" merge "${shards[@]}" > /dev/null 2>&1
expect_rc "merge without --out" 2 $?

# --- --from: a job that needs jobs of another run takes their outputs, and does not run them ---
if "$NS" run --help 2>/dev/null | grep -q -- '--from'; then
	checkout up
	up=$("$NS" run "$T/up/m.yaml" --job b --out "$T/runs-up" 2>/dev/null)
	checkout down
	down=$("$NS" run "$T/down/m.yaml" --job c --from "$up" --out "$T/runs-down" 2>"$T/err"); rc=$?
	expect_rc "run --job c --from RUN" 0 "$rc"
	expect_eq "only c ran" '["c"]' "$(python3 -c 'import json,sys; print(json.dumps(sorted(json.load(open(sys.argv[1]))["jobs"])))' "$down/run.json")"
	expect_eq "a and b were taken from the other run" '["a", "b"]' "$(python3 -c 'import json,sys; print(json.dumps(sorted(json.load(open(sys.argv[1])).get("upstream", {}))))' "$down/run.json")"
	m3=$("$NS" merge "$up" "$down" "${shards[1]}" --out "$T/merged3" 2>"$T/err"); rc=$?
	expect_rc "merge of the staged runs" 0 "$rc"
	check "audit --verify accepts it" "$NS" audit "$m3" --verify
	results "$m3" > "$T/m3.json"
	check "staged outputs and inputs equal the unsharded run's" cmp "$T/full.json" "$T/m3.json"
	"$NS" run "$T/down/m.yaml" --job c --from "$T/cut" --out "$T/runs-down" > /dev/null 2>&1
	expect_rc "--from a run that did not finish is refused" 2 $?
else
	skip "run --from RUN" "not wired into cmd/run.c yet"
fi
done_tests
