#!/usr/bin/env bash
# userns: where user namespaces are refused, the namespace sandbox fails closed (the job fails,
# no step runs anywhere) and says why and what to do. Refused here by a seccomp filter around
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
	expect_rc "refused user namespaces: exit 1" 1 "$rc"
	expect_grep "the error says the user namespace could not be set up" "cannot set up a user namespace" "$T/err"
	expect_grep "it names the cause found" "a seccomp filter on nightshift refuses them" "$T/err"
	expect_grep "it names the remedies" "Remedies: .*seccomp=unconfined.*backend: docker.*backend: none" "$T/err"
	check "the run directory verifies" "$NS" audit --verify "$dir"
	check "no step ran: the report was not written" test ! -e "$T/hello/workspace/reports/hello.md"
	check "the job failed in run.json" python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["jobs"]["hello"]["status"] != "failed")' "$dir/run.json"
fi
done_tests
