#!/usr/bin/env bash
# tamper: every field of run.json, every output and declared file, every event line changed alone
# and SHA256SUMS regenerated; and forgeries that reseal the chains: audit --verify exits 4 and names
# the file, the field and the event line each time (tests/e2e/tamper.py does the tampering).
source "$(dirname "$0")/lib.sh"
command -v zstd >/dev/null || { skip tamper "zstd is not installed"; done_tests; exit; }
cp -r "$ROOT/examples/hello" "$T/hello"
rm -rf "$T/hello/runs" "$T/hello/workspace/reports"
run=$("$NS" run "$T/hello/nightshift.yaml" --out "$T/runs" 2>"$T/err")
expect_rc "example runs" 0 $?
"$NS" audit "$run" --verify 2>"$T/err"
expect_rc "the untouched run verifies" 0 $?
python3 "$ROOT/tests/e2e/tamper.py" suite "$run" "$NS" > "$T/suite"
grep '^FAIL' -A1 "$T/suite"
read -r p _ f _ < <(tail -n1 "$T/suite")
expect_eq "tamper suite: nothing slips through" "0" "$f"
expect_eq "tamper suite: it ran its cases" 1 "$([ "${p:-0}" -gt 90 ] && echo 1)"
_pass=$((_pass + ${p:-0})); _fail=$((_fail + ${f:-0}))
done_tests
