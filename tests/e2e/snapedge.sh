#!/usr/bin/env bash
# snapedge: what a step leaves that snapshots used to choke on, through the real runner.
# A 2 GiB sparse file (`truncate -s 2G`) is stored as holes and restored as holes (st_blocks), a
# tree 300 levels deep is stored down to level 256 and said so, a change after both is in a layer,
# end.tar.zst holds only what changed after the last layer, every restore is the tree as it was,
# and `audit --verify` says INCOMPLETE (exit 4) for a sealed run whose end layer is missing.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0

# The namespace sandbox where it works here (the change feed is then on), else none.
backend=none
if userns; then
	backend=namespace
fi
echo "note: backend $backend"

ws=$T/ws
mkdir -p "$ws/src"
echo hello > "$ws/src/a"
cat > "$T/m.yaml" <<YAML
version: 1
workspace: ws
sandbox: { backend: $backend }
models:
  m:
    provider: scripted
    replies:
      - { tool_calls: [ { name: shell, arguments: { command: "truncate -s 2G big" } } ] }
      - { tool_calls: [ { name: shell, arguments: { command: "p=.; for k in \$(seq 300); do p=\$p/d; done; mkdir -p \$p && echo deep > \$p/f" } } ] }
      - { tool_calls: [ { name: shell, arguments: { command: "echo later > later.txt && rm src/a" } } ] }
      - { tool_calls: [ { name: shell, arguments: { command: "printf x | dd of=big bs=1 seek=1073741824 conv=notrunc 2>/dev/null; echo more >> later.txt" } } ] }
      - { tool_calls: [ { name: final_result, arguments: {} } ] }
workers:
  w: { model: m, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML

# The trees as they should be before each step and at the end, made here by the same commands.
mkdir -p "$T/want"
cp -a "$ws" "$T/want/1"
cp -a "$T/want/1" "$T/want/2" && truncate -s 2G "$T/want/2/big"
cp -a "$T/want/2" "$T/want/3" && (cd "$T/want/3" && p=.; for k in $(seq 300); do p=$p/d; done; mkdir -p $p && echo deep > $p/f)
cp -a "$T/want/3" "$T/want/4" && (cd "$T/want/4" && echo later > later.txt && rm src/a)
cp -a "$T/want/4" "$T/want/end" && (cd "$T/want/end" && printf x | dd of=big bs=1 seek=1073741824 conv=notrunc 2>/dev/null; echo more >> later.txt)

# A tree as type, mode, size and path down to 256 levels (what a layer can hold), the digests of
# its files but big, and big's byte at 1 GiB.
describe() {
	(cd "$1" && find . -mindepth 1 -maxdepth 256 -printf '%y %m %s %p\n' | LC_ALL=C sort &&
		find . -maxdepth 256 -type f ! -name big -print0 | LC_ALL=C sort -z | xargs -0r sha256sum &&
		{ [ ! -e big ] || dd if=big bs=1 skip=1073741824 count=1 2>/dev/null | od -An -c; })
}

dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the run succeeds" 0 "$rc"
[ "$rc" = 0 ] || tail -n 20 "$T/err"
zstd -dcq "$dir/jobs/j/events.jsonl.zst" > "$T/ev.jsonl"
for l in 0001 0002 0003 0004 end; do
	check "layer $l is there and opens with tar" bash -c "tar --zstd -tf '$dir/snapshots/$l.tar.zst' >/dev/null"
done
check "every layer is small: 2 GiB of holes are not stored" python3 - "$dir/snapshots" <<'PY'
import os, sys
sizes = {f: os.path.getsize(os.path.join(sys.argv[1], f)) for f in os.listdir(sys.argv[1])}
print(sizes)
sys.exit(max(sizes.values()) > 64 * 1024)
PY
check "the sparse file is a sparse entry (GNU tar sees 2 GiB)" bash -c "tar --zstd -tvf '$dir/snapshots/0002.tar.zst' | grep -q ' 2147483648 .* big$'"
check "the layer before step 3 says the folder at depth 256 was stored without what is below it" python3 - "$T/ev.jsonl" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
snap = [e for e in ev if e["type"] == "snapshot" and e["step"] == 3][0]
sk = snap["skipped"]
print(sk and sk[0]["path"][:40], sk and sk[0]["reason"])
sys.exit(not (len(sk) == 1 and sk[0]["path"] == "/".join(["d"] * 256) and "deeper than 256" in sk[0]["reason"]))
PY
check "the change after the deep tree is in layer 0004" bash -c "tar --zstd -tf '$dir/snapshots/0004.tar.zst' | grep -qx later.txt"
check "and so is the deletion" bash -c "tar --zstd -tf '$dir/snapshots/0004.tar.zst' | grep -qx 'src/.wh.a'"
check "end holds only what changed after the last layer" bash -c "[ \"\$(tar --zstd -tf '$dir/snapshots/end.tar.zst' | grep -v '^\.wh\.\.wh\.\.layer$' | LC_ALL=C sort | tr '\n' ' ')\" = 'big later.txt ' ]"
"$NS" audit "$dir" --verify 2>"$T/v"; rc=$?
expect_rc "the run verifies" 0 "$rc"
expect_grep "as verified" 'verified: ' "$T/v"

for step in 1 2 3 4 end; do
	"$NS" restore "$dir" --step "$step" --to "$T/r.$step" 2>"$T/r.$step.err"
	expect_rc "restore --step $step" 0 $?
	expect_eq "restore --step $step is the tree as it was" "$(describe "$T/want/$step")" "$(describe "$T/r.$step")"
done
for step in 2 end; do
	blocks=$(stat -c %b "$T/r.$step/big" 2>/dev/null)
	size=$(stat -c %s "$T/r.$step/big" 2>/dev/null)
	expect_eq "restore --step $step: big is 2 GiB" 2147483648 "$size"
	check "restore --step $step: big takes next to nothing on disk ($blocks blocks)" test "${blocks:-999999}" -lt 2048
done

# A sealed run whose end layer is gone (and no longer listed): INCOMPLETE, exit 4, named.
cp -a "$dir" "$T/noend"
rm "$T/noend/snapshots/end.tar.zst"
grep -v ' snapshots/end\.tar\.zst$' "$dir/SHA256SUMS" > "$T/noend/SHA256SUMS"
"$NS" audit "$T/noend" --verify 2>"$T/v2"; rc=$?
expect_rc "no end layer: audit --verify exits 4" 4 "$rc"
expect_grep "no end layer: it says INCOMPLETE" 'INCOMPLETE' "$T/v2"
expect_grep "no end layer: it names the layer" 'snapshots/end\.tar\.zst: missing' "$T/v2"
expect_nogrep "no end layer: it does not say verified" 'verified' "$T/v2"

# What the end layer leaves out (a fifo and a folder deeper than 256 levels made by the last step)
# is said where an auditor sees it: run.json's end_skipped (held by the run's own chain), audit
# (text and --json) and the report.
mkdir -p "$T/ws2"
echo x > "$T/ws2/f"
cat > "$T/m2.yaml" <<YAML
version: 1
workspace: ws2
sandbox: { backend: $backend }
models:
  m:
    provider: scripted
    replies:
      - { tool_calls: [ { name: shell, arguments: { command: "mkfifo pipe-end; p=.; for k in \$(seq 260); do p=\$p/e; done; mkdir -p \$p" } } ] }
      - { tool_calls: [ { name: final_result, arguments: {} } ] }
workers:
  w: { model: m, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
dir2=$("$NS" run "$T/m2.yaml" --out "$T/runs2" 2>"$T/err2"); rc=$?
expect_rc "a run whose last step leaves a fifo and a deep tree" 0 "$rc"
[ "$rc" = 0 ] || tail -n 20 "$T/err2"
check "run.json's end_skipped names both, with the end layer and the reason" python3 - "$dir2/run.json" <<'PY'
import json, sys
sk = json.load(open(sys.argv[1])).get("end_skipped", [])
print(sk)
by = {x["path"]: x for x in sk}
deep = "/".join(["e"] * 256)
sys.exit(not (len(sk) == 2 and set(by) == {"pipe-end", deep} and all(x["layer"] == "snapshots/end.tar.zst" for x in sk)
              and "not a file" in by["pipe-end"]["reason"] and "deeper than 256" in by[deep]["reason"]))
PY
check "the run's own chain holds it" bash -c "zstd -dcq '$dir2/events.jsonl.zst' | grep -q '\"end_skipped\":\[.*pipe-end'"
check "the run verifies" "$NS" audit "$dir2" --verify
"$NS" audit "$dir2" > "$T/a2" 2>&1
expect_grep "audit says what the end layer left out" '^left out of the end layer \(2\):$' "$T/a2"
expect_grep "and names the fifo with its reason" '^  snapshots/end\.tar\.zst  pipe-end: not a file' "$T/a2"
"$NS" audit "$dir2" --json > "$T/a2.json" 2>&1
check "audit --json: a line per entry" python3 - "$T/a2.json" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
sk = [l["end_skipped"] for l in lines if "end_skipped" in l]
sys.exit(not (len(sk) == 2 and {x["path"] for x in sk} >= {"pipe-end"} and all(x["reason"] for x in sk)))
PY
"$NS" report "$dir2" --out "$T/r2.html" 2>/dev/null
check "the report lists them" bash -c "grep -q 'Left out of the end layer (2)' '$T/r2.html' && grep -q '<code>pipe-end</code> in snapshots/end.tar.zst' '$T/r2.html'"
# Removed from run.json with SHA256SUMS made again: the run's chain still says it.
cp -a "$dir2" "$T/forged"
python3 - "$T/forged/run.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); del r["end_skipped"]; json.dump(r, open(sys.argv[1], "w"), indent=2)
PY
(cd "$T/forged" && grep -v ' run\.json$' SHA256SUMS > S && sha256sum run.json >> S && mv S SHA256SUMS)
"$NS" audit "$T/forged" --verify 2>"$T/v3"; rc=$?
expect_rc "end_skipped removed from run.json: audit --verify exits 4" 4 "$rc"
expect_grep "naming it" 'end_skipped' "$T/v3"

done_tests
