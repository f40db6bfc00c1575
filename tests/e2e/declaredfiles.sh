#!/usr/bin/env bash
# declaredfiles: a declared `files:` entry missing at final_result is told to the model (a tool
# error naming the missing files), which can then write them and finish; a model that never does
# fails the job when its turns run out, the error naming the files.
source "$(dirname "$0")/lib.sh"
command -v zstd >/dev/null || { skip declaredfiles "zstd is not installed"; done_tests; exit; }
mkdir -p "$T/ws"
cat > "$T/m.yaml" <<'YAML'
version: 1
workspace: ws
sandbox: { backend: none }
models:
  late:
    provider: scripted
    replies:
      - tool_calls: [ { name: final_result, arguments: {} } ]
      - tool_calls: [ { name: write_file, arguments: { path: reports/r.md, content: "the report\n" } } ]
      - tool_calls: [ { name: final_result, arguments: {} } ]
  never:
    provider: scripted
    replies:
      - tool_calls: [ { name: final_result, arguments: {} } ]
      - tool_calls: [ { name: final_result, arguments: {} } ]
      - tool_calls: [ { name: final_result, arguments: {} } ]
workers:
  late: { model: late, instructions: x, tools: [write_file], approval: { default: allow } }
  never: { model: never, instructions: x, max_turns: 2 }
jobs:
  late: { worker: late, files: [reports/r.md, README.txt] }
  never: { worker: never, files: [out/never.txt], workspace: ws }
YAML
echo readme > "$T/ws/README.txt"
dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "one job fails: the run exits 1" 1 "$rc"
js() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][sys.argv[2]][sys.argv[3]])' "$dir/run.json" "$1" "$2"; }
expect_eq "the job told of its missing file writes it and succeeds" succeeded "$(js late status)"
check "the file is among its outputs" cmp "$T/ws/reports/r.md" "$dir/jobs/late/files/reports/r.md"
ev() { zstd -dcq "$dir/jobs/$1/events.jsonl.zst"; }
expect_grep "the model was told which file is missing, and only that one" \
	'final_result rejected: the job declares files that are not in the workspace: reports/r\.md\. Write them' <(ev late)
expect_nogrep "a file that is there is not named" 'workspace: reports/r\.md, README' <(ev late)
expect_eq "the job that never writes it fails" failed "$(js never status)"
expect_grep "its error names the file" "declared file out/never.txt not in the workspace at final_result \(the model was told\)" <(js never error)
expect_grep "and the turn budget that ended it" "turn" <(js never error)
check "the run verifies" "$NS" audit "$dir" --verify

# Declared files whose names hold a backslash or a newline: SHA256SUMS escapes them as GNU
# sha256sum does, so `sha256sum -c` and audit --verify (of the folder and of its archive) pass.
cat > "$T/odd.yaml" <<'YAML'
version: 1
workspace: ws2
sandbox: { backend: none }
models:
  default:
    provider: scripted
    replies:
      - tool_calls: [ { name: write_file, arguments: { path: "out/c\\d.txt", content: "y" } } ]
      - tool_calls: [ { name: write_file, arguments: { path: "out/e\nf.txt", content: "z" } } ]
      - tool_calls: [ { name: final_result, arguments: {} } ]
workers:
  w: { instructions: x, tools: [write_file], approval: { default: allow } }
jobs:
  odd: { worker: w, files: ["out/c\\d.txt", "out/e\nf.txt"] }
YAML
mkdir -p "$T/ws2"
odd=$("$NS" run "$T/odd.yaml" --out "$T/oddruns" 2>"$T/odd.err"); rc=$?
expect_rc "files with a backslash and a newline in their names: the run succeeds" 0 "$rc"
expect_eq "both are among its outputs" "yz" "$(cat "$odd/jobs/odd/files/out/c\\d.txt" "$odd/jobs/odd/files/out/e"$'\n'"f.txt")"
check "sha256sum -c SHA256SUMS passes" bash -c "cd '$odd' && sha256sum -c --quiet SHA256SUMS"
check "the run verifies" "$NS" audit "$odd" --verify
tar --zstd -cf "$T/odd.tar.zst" -C "$T/oddruns" "$(basename "$odd")"
check "its archive verifies" "$NS" audit "$T/odd.tar.zst" --verify
done_tests
