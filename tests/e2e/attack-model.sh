#!/usr/bin/env bash
# attack-model: what a hostile model's replies can make of the runner, from an outside tester.
# Each part names the finding it holds (docs/security.md, "Origins and sinks").
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
unset GITHUB_ACTIONS
command -v python3 >/dev/null || { skip "attack-model" "python3 is needed for the model server"; done_tests; exit; }

MOCKPID=
trap '[ -n "$MOCKPID" ] && kill $MOCKPID 2>/dev/null; [ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"' EXIT

# serve SCRIPT_JSON: a loopback OpenAI-compatible model (tests/mockmodel.py); sets PORT
serve() {
	[ -n "$MOCKPID" ] && { kill $MOCKPID 2>/dev/null; wait $MOCKPID 2>/dev/null; }
	printf '%s' "$1" > "$T/script.json"
	rm -f "$T/port"
	python3 "$ROOT/tests/mockmodel.py" "$T/script.json" "$T/port" "$T/model.log" & MOCKPID=$!
	waitfor 60 test -s "$T/port"
	PORT=$(cat "$T/port")
}

# --- 1. A key given twice in a call's arguments ---
# The rules read the first "path" (cJSON), a server reads the last (Python, Node, Go): a rule
# allowing writes under reports/ let the server write notes.txt. Go's encoding/json also takes
# "PATH" or "Path" for "path".
if userns; then
	mkdir -p "$T/dup/ws/reports" "$T/dup/srv"
	echo original > "$T/dup/ws/notes.txt"
	cat > "$T/dup/srv/write.py" <<'PY'
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    m, r = msg.get("method"), None
    if m == "initialize":
        r = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "w", "version": "1"}}
    elif m == "tools/list":
        r = {"tools": [{"name": "write", "inputSchema": {"type": "object"}}]}
    elif m == "tools/call":
        a = msg["params"].get("arguments") or {}
        with open(a["path"], "w") as f:
            f.write(a.get("content", ""))
        r = {"content": [{"type": "text", "text": "wrote " + a["path"]}]}
    out = {"jsonrpc": "2.0", "id": msg["id"]}
    out.update({"result": r} if r is not None else {"error": {"code": -32601, "message": "no"}})
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
PY
	serve '{"by_turn": [
	  {"openai_calls": [
	    ["mcp__s__write", "{\"path\":\"/workspace/reports/a.md\",\"content\":\"DUP\",\"path\":\"/workspace/notes.txt\"}"],
	    ["mcp__s__write", "{\"path\":\"/workspace/reports/b.md\",\"content\":\"CASE\",\"PATH\":\"/workspace/notes.txt\"}"],
	    ["mcp__s__write", "{\"o\":{\"k\":1,\"k\":2},\"path\":\"/workspace/reports/c.md\",\"content\":\"DEEP\"}"],
	    ["mcp__s__write", "{\"path\":\"/workspace/reports/ok.md\",\"content\":\"fine\"}"]]},
	  {"openai_calls": [["final_result", "{}"]]}]}'
	cat > "$T/dup/m.yaml" <<YAML
version: 1
workspace: ws
models: { d: { provider: openai, base_url: "http://127.0.0.1:$PORT/v1", model: m, api_key_env: HOME } }
sandbox: { backend: namespace, network: none, mounts: [ { source: $T/dup/srv, target: /srv, mode: ro } ] }
mcp:
  s: { command: [python3, /srv/write.py] }
workers:
  w:
    model: d
    instructions: x
    tools: ["mcp__s__write"]
    approval:
      default: deny
      rules:
        - { tool: "mcp__s__write", args: { path: "/workspace/reports/**" }, decision: allow }
jobs:
  j: { worker: w, input: go }
YAML
	"$NS" run "$T/dup/m.yaml" --out "$T/dup/runs" > "$T/dup/out" 2> "$T/dup/err"
	expect_rc "dup: the run ends" 0 $?
	expect_eq "dup: notes.txt is not written through a second path" original "$(cat "$T/dup/ws/notes.txt")"
	zstd -dcq "$(cat "$T/dup/out")/jobs/j/events.jsonl.zst" > "$T/dup/ev" 2>/dev/null
	n=$(grep -c '"type":"decision".*"decision":"deny".*given twice' "$T/dup/ev")
	expect_eq "dup: the three calls with a key twice (exact, case, nested) are denied, naming it" 3 "$n"
	check "dup: no file of theirs was written" test ! -e "$T/dup/ws/reports/a.md" -a ! -e "$T/dup/ws/reports/b.md" \
		-a ! -e "$T/dup/ws/reports/c.md"
	expect_eq "dup: a call with each key once runs" fine "$(cat "$T/dup/ws/reports/ok.md" 2>/dev/null)"
	"$NS" policy "$T/dup/m.yaml" --worker w --tool mcp__s__write \
		--args '{"path":"/workspace/reports/a.md","path":"/workspace/notes.txt"}' > "$T/dup/pol" 2>&1
	expect_grep "dup: nightshift policy decides the same" "^deny" "$T/dup/pol"
	expect_grep "dup: and says why" "key 'path' given twice" "$T/dup/pol"
	# Go's encoding/json folds U+017F (long s) into s and U+212A (Kelvin) into k
	"$NS" policy "$T/dup/m.yaml" --worker w --tool mcp__s__write \
		--args '{"path":"/workspace/reports/a.md","source":"a","\u017fource":"b"}' > "$T/dup/pol2" 2>&1
	expect_grep "dup: a long s counts as s" "^deny" "$T/dup/pol2"
	"$NS" policy "$T/dup/m.yaml" --worker w --tool mcp__s__write \
		--args '{"path":"/workspace/reports/a.md","kind":"a","\u212aind":"b"}' > "$T/dup/pol3" 2>&1
	expect_grep "dup: a Kelvin sign counts as k" "^deny" "$T/dup/pol3"
else
	skip "attack-model dup" "user namespaces are not available"
fi

# --- 2. One reply of 40 000 tool calls ---
# 2.6 MB, within the body and JSON caps. Each call cost a walk over every call before it (the map of
# call ids to steps, the context's last turns): 41 s at full CPU before the next request, for one
# reply. A reply making more than 1024 calls is now refused as unusable, as a stream's index past
# 1024 is, and retried; one of 1024 runs.
python3 - "$T/many.json" <<'PY2'
import json, sys
many = [["nope", "{}"] for i in range(40000)]
ok = [["nope", "{}"] for i in range(1024)]
json.dump({"by_turn": [{"openai_calls": many}, {"openai_calls": ok},
                       {"openai_calls": [["final_result", "{}"]]}]}, open(sys.argv[1], "w"))
PY2
serve "$(cat "$T/many.json")"
mkdir -p "$T/many/ws"
cat > "$T/many/m.yaml" <<YAML
version: 1
workspace: ws
models: { d: { provider: openai, base_url: "http://127.0.0.1:$PORT/v1", model: m, api_key_env: HOME, retries: 1 } }
sandbox: { backend: none }
workers:
  w: { model: d, instructions: x, tools: [], max_turns: 3 }
jobs:
  j: { worker: w, input: go }
YAML
start=$SECONDS
timeout 60 "$NS" run "$T/many/m.yaml" --out "$T/many/runs" > "$T/many/out" 2> "$T/many/err"
rc=$? took=$((SECONDS - start))
expect_rc "many: the job fails (exit 1), not killed" 1 $rc
check "many: within 10 s ($took s)" test "$took" -lt 10
expect_grep "many: the reply is refused, saying why" "40000 tool calls in one reply, more than 1024" "$T/many/err"
serve "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["by_turn"]=d["by_turn"][1:]; print(json.dumps(d))' "$T/many.json")"
sed -i "s#127.0.0.1:[0-9]*#127.0.0.1:$PORT#" "$T/many/m.yaml"
start=$SECONDS
timeout 60 "$NS" run "$T/many/m.yaml" --out "$T/many/runs" > "$T/many/out" 2> "$T/many/err"
rc=$? took=$((SECONDS - start))
expect_rc "many: a reply of 1024 calls is taken" 0 $rc
check "many: 1024 calls within 10 s ($took s)" test "$took" -lt 10

# --- 3. A typed output whose keys differ only in case ---
# The schema checks "verdict" (enum ok, needs-work) and lets "VERDICT" through as another property;
# GitHub Actions looks a fromJSON object's properties up ignoring case (DictionaryContextData), so
# fromJSON(steps.nightshift.outputs.outputs).j.verdict, as ci/examples/nightly.yml reads it, may
# take the unchecked value, or fail the step. Refused like any output the schema refuses.
mkdir -p "$T/case/ws"
cat > "$T/case/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  m:
    provider: scripted
    replies:
      - { tool_calls: [ { name: final_result, arguments: { verdict: ok, VERDICT: "x\n::add-mask::y" } } ] }
      - { tool_calls: [ { name: final_result, arguments: { verdict: ok, rest: { a: 1, A: 2 } } } ] }
      - { tool_calls: [ { name: final_result, arguments: { verdict: ok, other: "Verdict</pre><script>alert(1)</script>\n|x|\n::warning::w" } } ] }
sandbox: { backend: none }
workers:
  w:
    model: m
    instructions: x
    tools: []
    output: { type: object, required: [verdict], properties: { verdict: { enum: [ok, needs-work] } } }
jobs:
  j: { worker: w, input: go }
YAML
GITHUB_ACTIONS=true GITHUB_OUTPUT=$T/case/gho GITHUB_STEP_SUMMARY=$T/case/ghs "$NS" run "$T/case/m.yaml" --out "$T/case/runs" > "$T/case/out" 2> "$T/case/err"
expect_rc "case: the job ends with the third output" 0 $?
zstd -dcq "$(cat "$T/case/out")/jobs/j/events.jsonl.zst" > "$T/case/ev" 2>/dev/null
expect_eq "case: two outputs refused, naming the key" 2 "$(grep -c '"type":"output_rejected".*given twice' "$T/case/ev")"
expect_nogrep "case: no VERDICT reaches \$GITHUB_OUTPUT" 'VERDICT' "$T/case/gho"
expect_nogrep "case: the step summary holds no markup of the model's" '<script|</pre><' "$T/case/ghs"
expect_grep "case: it shows it escaped" '&lt;/pre&gt;&lt;script&gt;' "$T/case/ghs"
expect_nogrep "case: no workflow command in the log" '^[[:space:]]*::warning' "$T/case/err"

# --- 4. A declared file the model makes sparse ---
# truncate -s takes no room in the workspace (snapshot.max_size counts blocks) and a layer keeps
# its holes, but the copy into jobs/ID/files/ wrote every zero: 4 GiB made in 1 ms filled this
# machine's disk (ENOSPC) after 17 s. The copy now keeps the holes, and a declared file longer
# than snapshot.max_size fails the job, naming it (its digest would hash every zero).
if userns; then
	mkdir -p "$T/sparse/ws/reports"
	cat > "$T/sparse/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  m:
    provider: scripted
    replies:
      - { tool_calls: [ { name: shell, arguments: { command: "printf head > reports/r.md; truncate -s 48M reports/r.md; printf mid | dd of=reports/r.md bs=1 seek=20000000 conv=notrunc 2>/dev/null; echo tail >> reports/r.md; truncate -s 200M reports/big.md" } } ] }
      - { tool_calls: [ { name: final_result, arguments: {} } ] }
sandbox: { backend: namespace, network: none }
snapshot: { max_size: 100M }
workers:
  w: { model: m, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  small: { worker: w, input: go, files: [reports/r.md] }
  big: { worker: w, input: go, files: [reports/big.md], needs: [small] }
YAML
	"$NS" run "$T/sparse/m.yaml" --out "$T/sparse/runs" > "$T/sparse/out" 2> "$T/sparse/err"
	expect_rc "sparse: the big job fails" 1 $?
	r=$(cat "$T/sparse/out")
	check "sparse: the small file is copied byte for byte" cmp -s "$T/sparse/ws/reports/r.md" "$r/jobs/small/files/reports/r.md"
	check "sparse: its copy keeps its holes (under 1 MiB on disk)" \
		test "$(du -k "$r/jobs/small/files/reports/r.md" 2>/dev/null | cut -f1)" -lt 1024
	expect_grep "sparse: a declared file past max_size is named" "declared file reports/big.md.*209715200 bytes.*max_size" "$T/sparse/err"
	check "sparse: and not copied" test ! -e "$r/jobs/big/files/reports/big.md"
	"$NS" audit "$r" --verify > "$T/sparse/verify" 2>&1
	expect_rc "sparse: the run verifies (the copy's digest holds)" 0 $?
else
	skip "attack-model sparse" "user namespaces are not available"
fi

# --- 5. A .gitignore the model writes, under snapshot.gitignore: true ---
# The rules were applied to every path, tracked or not, where git applies them to untracked paths
# only: a model that wrote ".gitignore: *" and then changed a tracked file left no trace of it in
# the layers, and changes.patch, diff and the report said the file was deleted, while git status
# in the workspace said modified. Tracked paths (the workspace's .git/index) are now never ignored;
# an index that cannot be read leaves nothing ignored.
mkdir -p "$T/gi/ws"
git -C "$T/gi/ws" init -q
echo "int main(){}" > "$T/gi/ws/main.c"
mkdir -p "$T/gi/ws/src/deep" "$T/gi/ws/build"
echo "tracked below" > "$T/gi/ws/src/deep/lib.c"
echo "made by a build" > "$T/gi/ws/build/out.o"
git -C "$T/gi/ws" add main.c src
git -C "$T/gi/ws" -c user.name=t -c user.email=t@t commit -qm init
cat > "$T/gi/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  m:
    provider: scripted
    replies:
      - { tool_calls: [ { name: write_file, arguments: { path: ".gitignore", content: "*\n" } } ] }
      - { tool_calls: [ { name: write_file, arguments: { path: "main.c", content: "BACKDOOR\n" } } ] }
      - { tool_calls: [ { name: write_file, arguments: { path: "src/deep/lib.c", content: "BACKDOOR TOO\n" } } ] }
      - { tool_calls: [ { name: final_result, arguments: {} } ] }
sandbox: { backend: none }
snapshot: { gitignore: true }
workers:
  w: { model: m, instructions: x, tools: [write_file], approval: { default: allow } }
jobs:
  j: { worker: w, input: go }
YAML
"$NS" run "$T/gi/m.yaml" --out "$T/gi/runs" > "$T/gi/out" 2> "$T/gi/err"
expect_rc "gitignore: the run succeeds" 0 $?
r=$(cat "$T/gi/out")
expect_grep "gitignore: the tracked file's change is in the patch" '^\+BACKDOOR$' "$r/jobs/j/changes.patch"
expect_grep "gitignore: and the one in an ignored folder" '^\+BACKDOOR TOO$' "$r/jobs/j/changes.patch"
expect_eq "gitignore: no tracked file is said deleted" 0 \
	"$(grep -A1 -E '^diff --git a/(main\.c|src/deep/lib\.c) ' "$r/jobs/j/changes.patch" | grep -c '^deleted')"
expect_nogrep "gitignore: the untracked .gitignore it matches stays out, as in git" 'b/\.gitignore' "$r/jobs/j/changes.patch"
# a .git/index that is not an index: nothing is ignored (the walk cannot tell tracked from not)
git -C "$T/gi/ws" reset -q --hard && rm "$T/gi/ws/.gitignore"
printf 'not an index' > "$T/gi/ws/.git/index"
"$NS" run "$T/gi/m.yaml" --out "$T/gi/runs2" > "$T/gi/out2" 2> "$T/gi/err2"
r=$(cat "$T/gi/out2")
expect_grep "gitignore: a broken index ignores nothing" 'b/\.gitignore' "$r/jobs/j/changes.patch"
expect_grep "gitignore: and records the change" '^\+BACKDOOR$' "$r/jobs/j/changes.patch"
# a worktree's .git is a file: its index lies elsewhere, so nothing is ignored either
rm -rf "$T/gi/ws/.git" "$T/gi/ws/.gitignore" && echo "int main(){}" > "$T/gi/ws/main.c"
echo "gitdir: /nonexistent/.git/worktrees/x" > "$T/gi/ws/.git"
"$NS" run "$T/gi/m.yaml" --out "$T/gi/runs3" > "$T/gi/out3" 2> "$T/gi/err3"
expect_grep "gitignore: a .git file ignores nothing" '^\+BACKDOOR$' "$(cat "$T/gi/out3")/jobs/j/changes.patch"
# a split index (git update-index --split-index): .git/index lists only changes, with empty names,
# its entries are in .git/sharedindex.*; read as it was, nothing was tracked, and a tracked file
# missing from the first layer (deleted in the worktree) that a step writes back was ignored
rm -rf "$T/gi/ws/.git" "$T/gi/ws/.gitignore" && echo "int main(){}" > "$T/gi/ws/main.c" && echo "tracked below" > "$T/gi/ws/src/deep/lib.c"
git -C "$T/gi/ws" init -q && git -C "$T/gi/ws" add main.c src && git -C "$T/gi/ws" update-index --split-index
rm "$T/gi/ws/src/deep/lib.c"
"$NS" run "$T/gi/m.yaml" --out "$T/gi/runs4" > "$T/gi/out4" 2> "$T/gi/err4"
expect_grep "gitignore: a split index ignores nothing" '^\+BACKDOOR TOO$' "$(cat "$T/gi/out4")/jobs/j/changes.patch"
# a sparse index: src/ outside the sparse checkout is one entry "src/"; git tracks src/deep/lib.c
# (git status: "M src/deep/lib.c" once a step writes it), so the walk does not ignore it
rm -rf "$T/gi/ws/.git" "$T/gi/ws/.gitignore" && echo "int main(){}" > "$T/gi/ws/main.c" && echo "tracked below" > "$T/gi/ws/src/deep/lib.c"
mkdir -p "$T/gi/ws/doc" && echo doc > "$T/gi/ws/doc/a"
git -C "$T/gi/ws" init -q && git -C "$T/gi/ws" add main.c src doc &&
	git -C "$T/gi/ws" -c user.name=t -c user.email=t@t commit -qm init &&
	git -C "$T/gi/ws" sparse-checkout set --cone --sparse-index doc
check "gitignore: the sparse index holds src/ as one entry" test "$(git -C "$T/gi/ws" ls-files --sparse src)" = src/
"$NS" run "$T/gi/m.yaml" --out "$T/gi/runs5" > "$T/gi/out5" 2> "$T/gi/err5"
expect_grep "gitignore: a path in a sparse folder is tracked" '^\+BACKDOOR TOO$' "$(cat "$T/gi/out5")/jobs/j/changes.patch"

# --- 6. A workspace of many empty files ---
# snapshot.max_size counted the blocks of regular files only: an empty file, a symlink or a folder
# cost nothing, while each costs the runner about 300 bytes of memory in every scan (a million
# empty files: 300 MiB, 25 s for the end layer, with room for tens of millions under the default
# 10G). Each entry now counts at least a 4 KiB block, and the walk stops once the entries alone
# pass max_size, before it holds them all.
if userns; then
	mkdir -p "$T/flood/ws"
	cat > "$T/flood/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  m:
    provider: scripted
    replies:
      - { tool_calls: [ { name: shell, arguments: { command: "mkdir d && cd d && seq 12000 | xargs touch" } } ] }
      - { tool_calls: [ { name: shell, arguments: { command: "true" } } ] }
      - { tool_calls: [ { name: final_result, arguments: {} } ] }
sandbox: { backend: namespace, network: none }
snapshot: { max_size: 40M }
workers:
  w: { model: m, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w, input: go }
YAML
	"$NS" run "$T/flood/m.yaml" --out "$T/flood/runs" > "$T/flood/out" 2> "$T/flood/err"
	expect_rc "flood: 12000 empty files under a 40M max_size fail the job" 1 $?
	expect_grep "flood: naming max_size" "over snapshot.max_size" "$T/flood/err"
	rm -rf "$T/flood/ws/d"
	mkdir -p "$T/flood/ws/few" && (cd "$T/flood/ws/few" && seq 2000 | xargs touch)
	"$NS" run "$T/flood/m.yaml" --out "$T/flood/runs" > "$T/flood/out" 2> "$T/flood/err"
	expect_rc "flood: 2000 files at the start fit, and so does nothing more" 1 $?
	expect_grep "flood: the step's 12000 do not" "over snapshot.max_size" "$T/flood/err"
	check "flood: the first snapshot of 2000 was taken" grep -q '"type":"snapshot"' \
		<(zstd -dcq "$(cat "$T/flood/out")/jobs/j/events.jsonl.zst")
else
	skip "attack-model flood" "user namespaces are not available"
fi

done_tests
