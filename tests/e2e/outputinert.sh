#!/usr/bin/env bash
# Values from a job's output are inert data (docs/security.md, "Origins and sinks"): a matrix made
# from a job's output never becomes a host path outside its declared root (a workspace or a mount
# source resolves beneath the manifest's folder, or the folder written before the value, without
# following links), and is never expanded again as ${{ }}. A member whose value is refused is a
# failed member saying why; the others run.
source "$(dirname "$0")/lib.sh"
unset GITHUB_ACTIONS
export NIGHTLY_TOKEN=nt-s3cr3t-$RANDOM$RANDOM
mkdir -p "$T/top/repos/alpha" "$T/top/data/alpha" "$T/victim" "$T/outside/alpha"
echo VICTIM-CONTENT > "$T/victim/secret"
echo OUTSIDE-CONTENT > "$T/outside/alpha/secret"
echo alpha > "$T/top/repos/alpha/name"
cp -a "$T/victim" "$T/victim.orig"
cp -a "$T/outside" "$T/outside.orig"
# manifest LIST [MOUNT]: scan plants links (repos/web -> victim, repos/lnk -> outside) and returns LIST
manifest() {
	local mount=${2:-}
	cat > "$T/top/m.yaml" <<YAML
version: 1
workspace: .
sandbox: { backend: none }
models:
  scan:
    provider: scripted
    replies:
      - tool_calls: [ {name: shell, arguments: {command: "ln -sfn $T/victim repos/web; ln -sfn $T/outside repos/lnk; ln -sfn $T/victim data/web"}} ]
      - tool_calls: [ {name: final_result, arguments: {repos: $1, note: "\${{ env.NIGHTLY_TOKEN }}"}} ]
  fix:
    provider: scripted
    replies:
      - tool_calls: [ {name: shell, arguments: {command: "echo fixed >> name"}} ]
      - tool_calls: [ {name: final_result, arguments: {}} ]
workers:
  scanner: { model: scan, instructions: x, tools: [shell], approval: { default: allow } }
  fixer: { model: fix, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  scan: { worker: scanner }
  fix:
    worker: fixer
    needs: [scan]
    matrix: { repo: "\${{ jobs.scan.output.repos }}" }
    fail_fast: true
    workspace: repos/\${{ matrix.repo }}
    input: "fix \${{ matrix.repo }} (\${{ jobs.scan.output.note }})"
$mount
YAML
}
unchanged() {
	diff -r "$T/victim" "$T/victim.orig" >/dev/null && diff -r "$T/outside" "$T/outside.orig" >/dev/null
}
nosecret() { # nosecret DIR: no layer and no event log of the run holds the victims' bytes or the token
	! (cd "$1" && for f in $(find . -name '*.zst'); do zstd -dcq "$f"; done) | grep -aqE "VICTIM-CONTENT|OUTSIDE-CONTENT|$NIGHTLY_TOKEN"
}
# attack NAME JSONVALUE [MOUNT]: a member made from VALUE fails with the reason, alpha runs, nothing
# outside is read or written
attack() {
	local name=$1 value=$2
	rm -rf "$T/top/repos/web" "$T/top/repos/lnk" "$T/top/data/web"
	manifest "[alpha, $value]" "${3:-}"
	dir=$("$NS" run "$T/top/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
	expect_rc "$name: the run ends failed (one member failed)" 1 "$rc"
	check "$name: the run directory was made" test -f "$dir/run.json"
	check "$name: alpha ran, the member of the value failed saying why, not cancelling alpha" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"]
bad = [k for k in j if k.startswith("fix-") and k != "fix-alpha"]
ok = j.get("fix-alpha", {}).get("status") == ("failed" if sys.argv[2] else "succeeded") and len(bad) == 1 \
     and j[bad[0]]["status"] == "failed" and "its matrix value" in j[bad[0]].get("error", "")
sys.exit(not ok)' "$dir/run.json" "${4:-}"
	[ -z "${4:-}" ] || expect_grep "$name: the key is refused to every value from a job's output" "fix-alpha: failed: its matrix value: .*a value from a job's output may not set" "$T/err"
	check "$name: nothing outside the root was touched" unchanged
	check "$name: no layer or log holds what is outside, nor the token" nosecret "$dir"
	check "$name: stderr never shows the token" bash -c "! grep -q '$NIGHTLY_TOKEN' '$T/err'"
	cp -a "$T/victim.orig/." "$T/victim/"; cp -a "$T/outside.orig/." "$T/outside/"
}
attack "../../victim" '"../../victim"'
attack "absolute path" "\"$T/victim\""
attack "a symlink planted by the scan's step" '"web"'
attack "a symlinked parent folder" '"lnk/alpha"'
attack "a .. inside" '"alpha/../../../victim"'
attack "a newline" '"alpha\nx"'
attack "a tab" '"al\tpha"'
attack "empty" '""'
attack "." '"."'
attack "a trailing slash" '"alpha/"'
attack "very long" "\"$(printf 'a%.0s' $(seq 1 5000))\""
attack "\${{ }} inside the value" '"${{ env.NIGHTLY_TOKEN }}"'
attack "\${{ }} of an input inside the value" '"${{ inputs.x }}"'
attack "mount source beneath data/" '"../victim"' '    sandbox: { mounts: [ {source: "data/${{ matrix.repo }}", target: /data} ] }'
attack "mount source through a planted link" '"web"' '    sandbox: { mounts: [ {source: "data/${{ matrix.repo }}", target: /data} ] }'
attack "a value may not pass the runner's environment in" '"NIGHTLY_TOKEN"' '    sandbox: { env: ["${{ matrix.repo }}"] }' all
attack "a value may not pick the sandbox" '"none"' '    sandbox: { backend: "${{ matrix.repo }}" }' all

# the value stays inert in the input too: the model reads the expression's text, not the token
manifest '[alpha]'
dir=$("$NS" run "$T/top/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "a plain run" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
check "the job's output in the input is shown as written" bash -c "zstd -dcq '$dir/jobs/fix-alpha/events.jsonl.zst' | grep -qF 'fix alpha (\${{ env.NIGHTLY_TOKEN }})'"
check "and no log holds the token" nosecret "$dir"
manifest '["${{ env.NIGHTLY_TOKEN }}"]'
sed -i 's|    workspace: repos/\${{ matrix.repo }}||' "$T/top/m.yaml"
dir=$("$NS" run "$T/top/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "a matrix value holding \${{ }}, in the input only" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
check "the model reads the value as written" bash -c "zstd -dcq '$dir'/jobs/fix-*/events.jsonl.zst | grep -qF 'fix \${{ env.NIGHTLY_TOKEN }} ('"
check "no log holds the token" nosecret "$dir"
done_tests
