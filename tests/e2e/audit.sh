#!/usr/bin/env bash
# audit: the call table, --json for jq, and --verify against tampering of every kind.
source "$(dirname "$0")/lib.sh"

cp -r "$ROOT/examples/hello" "$T/hello"
rm -rf "$T/hello/runs" "$T/hello/workspace/reports"
run=$("$NS" run "$T/hello/nightshift.yaml" --out "$T/runs" 2>"$T/err")
expect_rc "example runs" 0 $?

"$NS" audit "$run" > "$T/table" 2>"$T/err"
expect_rc "audit exits 0" 0 $?
expect_grep "table header" "STEP +JOB +TOOL +ARGUMENTS +DECISION +RULE +EXIT +MS" "$T/table"
expect_grep "allowed shell call with its rule and exit code" "^ +2 +hello +shell +wc -l notes.txt todo.txt +allow +3 +0 " "$T/table"
expect_grep "denied call by the default" "^ +3 +hello +shell +rm -rf todo.txt +deny +default +- " "$T/table"
expect_grep "summary counts" "^4 tool calls" "$T/table"
expect_grep "summary: job status" "hello +succeeded" "$T/table"

"$NS" audit "$run" --json > "$T/json"
expect_eq "one JSON object per call" 4 "$(wc -l < "$T/json")"
expect_eq "fields for jq" "hello 3 shell rm -rf todo.txt deny default None" \
	"$(python3 -c 'import json,sys; c=[json.loads(l) for l in open(sys.argv[1])][2]; print(c["job"], c["step"], c["tool"], c["arguments"]["command"], c["decision"], c["rule"], c["exit_code"])' "$T/json")"
expect_eq "--decision deny" 1 "$("$NS" audit "$run" --json --decision deny | wc -l)"
expect_eq "--tool shell" 2 "$("$NS" audit "$run" --json --tool shell | wc -l)"
expect_eq "--grep" 1 "$("$NS" audit "$run" --json --grep reports/hello | wc -l)"
expect_eq "--job other" 0 "$("$NS" audit "$run" --json --job other | wc -l)"
"$NS" audit "$run" --job nosuch 2>"$T/err"
expect_rc "an unknown --job is a usage error" 2 $?
expect_grep "and says which jobs there are" "no such job \(its jobs: hello\)" "$T/err"
mkdir -p "$T/notarun"
for v in "" --verify; do
	"$NS" audit "$T/notarun" $v 2>"$T/err"
	expect_rc "audit $v of a folder that is not a run: exit 2" 2 $?
	expect_grep "audit $v of a folder that is not a run: the reason" "not a run directory" "$T/err"
done
"$NS" restore "$run" --step 5 --to "$T/r5" 2>"$T/err"
expect_rc "restore --step past the last: exit 2" 2 $?
expect_grep "restore --step past the last: the reason" "has 4 steps" "$T/err"
check "restore --step 4 (the last) works" "$NS" restore "$run" --step 4 --to "$T/r4"
touch "$T/afile"
"$NS" run "$T/hello/nightshift.yaml" --out "$T/afile" > "$T/out" 2>"$T/err"
expect_rc "run --out FILE: exit 2" 2 $?
expect_grep "run --out FILE: the reason" "--out .*afile: not a directory" "$T/err"
expect_eq "run --out FILE: nothing on stdout" "" "$(cat "$T/out")"
"$NS" audit "$run" --decision maybe 2>"$T/err"
expect_rc "bad --decision is a usage error" 2 $?

"$NS" audit "$run" --verify 2>"$T/err"
expect_rc "an untouched run verifies" 0 $?
expect_grep "verify says what it checked" "verified: [0-9]+ files, [0-9]+ events, [0-9]+ layers" "$T/err"

# tamper: each copy changed one way must fail with exit 4 and name the file.
tamper() {  # tamper NAME FILE-REGEX SHELL-SNIPPET (runs in the copy)
	rm -rf "$T/t" && cp -r "$run" "$T/t"
	(cd "$T/t" && eval "$3")
	"$NS" audit "$T/t" --verify 2>"$T/err"
	expect_rc "$1: exit 4" 4 $?
	expect_grep "$1: names the file" "$2" "$T/err"
}
ev=jobs/hello/events.jsonl.zst
recompress='zstd -qf --rm plain -o '$ev
tamper "byte flipped in an events file" "$ev" "python3 -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,\"rb\").read()); b[len(b)//2]^=1; open(p,\"wb\").write(b)' $ev"
tamper "last event line deleted" "$ev:[0-9]+: last line's digest" "zstd -dcq $ev | head -n -1 > plain && $recompress && python3 - <<'PY'
import hashlib
lines = open('SHA256SUMS').read().splitlines()
out = []
for l in lines:
    h, p = l.split('  ', 1)
    if p == '$ev':
        h = hashlib.sha256(open(p, 'rb').read()).hexdigest()
    out.append(h + '  ' + p)
open('SHA256SUMS', 'w').write('\n'.join(out) + '\n')
PY"
tamper "two event lines swapped" "$ev:[0-9]+: (seq|prev)" "zstd -dcq $ev | awk 'NR==3{a=\$0; next} NR==4{print; print a; next} {print}' > plain && $recompress"
tamper "a line appended" "$ev" "zstd -dcq $ev > plain && tail -n 1 plain >> plain && $recompress"
tamper "a snapshot edited" "snapshots/0002.tar.zst" "printf x >> snapshots/0002.tar.zst"
tamper "output.json edited" "jobs/hello/output.json" "sed -i 's/5/6/' jobs/hello/output.json"
tamper "a file added" "extra.txt: not listed" "echo hi > extra.txt"
tamper "a snapshot removed" "snapshots/0001.tar.zst" "rm snapshots/0001.tar.zst"

# a run that never finished (no run.json, no SHA256SUMS) verifies up to its last whole event
rm -rf "$T/t" && cp -r "$run" "$T/t" && rm "$T/t/run.json" "$T/t/SHA256SUMS"
zstd -dcq "$T/t/$ev" | head -n 5 > "$T/plain" && zstd -qf "$T/plain" -o "$T/t/$ev"
head -c -3 "$T/t/$ev" > "$T/cut" && cp "$T/cut" "$T/t/$ev"
"$NS" audit "$T/t" --verify 2>"$T/err"
expect_rc "an unfinished run checks out but is INCOMPLETE: exit 4" 4 $?
expect_grep "and is marked incomplete" "INCOMPLETE: the run was not sealed; what it wrote checks out" "$T/err"
expect_nogrep "nothing of it failed" "FAILED" "$T/err"
done_tests
