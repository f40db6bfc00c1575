#!/usr/bin/env bash
# userns: where user namespaces are refused, the namespace sandbox fails closed (run stops before
# anything is made or spent, exit 2, no step runs anywhere) and says why and what to do; doctor says
# the same as a failed check. Refused here by a seccomp filter around
# nightshift (tests/fixtures/nouserns.c), as Docker's default profile does; the other causes
# (AppArmor, the sysctls) are checked by test_userns, since changing them here would change the
# machine.
source "$(dirname "$0")/lib.sh"
cc -o "$T/nouserns" "$ROOT/tests/fixtures/nouserns.c" -lseccomp 2>"$T/cc.err" || cat "$T/cc.err"
check "the refusing wrapper builds" test -x "$T/nouserns"
if [ -x "$T/nouserns" ]; then
	cp -r "$ROOT/examples/hello" "$T/hello"
	rm -rf "$T/hello/runs" "$T/hello/workspace/reports"
	dir=$("$T/nouserns" "$NS" run "$T/hello/nightshift.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
	expect_rc "refused user namespaces: exit 2 before anything runs" 2 "$rc"
	expect_grep "the error says the user namespace could not be set up" "cannot set up a user namespace" "$T/err"
	expect_grep "it names the cause found" "a seccomp filter on nightshift refuses them" "$T/err"
	expect_grep "it names the remedies" "Remedies: .*seccomp=unconfined.*backend: docker.*backend: none" "$T/err"
	expect_grep "it names the job and points at doctor" "job hello: the namespace sandbox cannot start \\(nightshift doctor" "$T/err"
	expect_eq "no run directory is made" "" "$dir$(ls "$T/runs" 2>/dev/null)"
	check "no step ran: the report was not written" test ! -e "$T/hello/workspace/reports/hello.md"
	"$T/nouserns" "$NS" doctor "$T/hello/nightshift.yaml" >"$T/doc.out" 2>"$T/doc.err"; rc=$?
	expect_rc "doctor: exit 1 when the manifest cannot run" 1 "$rc"
	expect_grep "doctor: the sandbox line fails with the cause" "^FAIL  namespace sandbox +no step can run: .*a seccomp filter on nightshift refuses them" "$T/doc.out"
	expect_grep "doctor: and the remedies" "Remedies: .*seccomp=unconfined" "$T/doc.out"
	expect_grep "doctor: the other checks still run" "^ok    model default" "$T/doc.out"
	"$T/nouserns" "$NS" doctor --json >"$T/doc.json" 2>/dev/null
	check "doctor --json says the same" python3 -c 'import json,sys; c={x["check"]: x["state"] for x in json.load(open(sys.argv[1]))}; sys.exit(c.get("namespace sandbox") != "fail")' "$T/doc.json"
fi
done_tests
