#!/usr/bin/env bash
# attack-admin: an outsider who writes the manifest, the flags, the user's defaults or the
# environment tries to weaken the admin policy (/etc/nightshift/policy.yaml); and an admin policy
# a team would plainly write must not refuse what it plainly allows. The policy's folder is a
# tmpfs mounted in a mount namespace of the test's own (as e2e/layers does).
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
	skip "attack-admin" "mounting a test folder over /etc/nightshift needs root"
	done_tests
	exit
fi
[ -d /etc/nightshift ] || mkdir -p /etc/nightshift
A=$T/admin
mkdir -p "$A" "$T/ws"
echo hello >"$T/ws/notes.txt"
ns() {
	mkdir -p /etc/nightshift # again: a test of another's may have removed it
	unshare -m --propagation private sh -c '
		mount -t tmpfs -o mode=755 tmpfs /etc/nightshift || exit 99
		cp -p "$1"/* /etc/nightshift/ 2>/dev/null
		shift; exec "$@"' _ "$A" "$@"
}
cat >"$T/script.yaml" <<'S'
- tool_calls: [{ name: shell, arguments: { command: "ls" } }]
- tool_calls: [{ name: final_result, arguments: {} }]
S
# manifest NETWORK: a manifest whose sandbox has that network.
manifest() {
	cat <<M
version: 1
workspace: ws
models: { default: { provider: scripted, script: script.yaml } }
sandbox: { backend: namespace, network: $1, timeout: 30s }
workers:
  w: { instructions: do it, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w, input: go }
M
}

# 1. The admin's allow list admits every entry it holds: a port it admits (no port: 443 and 80),
# a name in other case, a name below its *.domain, a range inside its CIDR. Before: each refused,
# "not in the admin policy's allow list", as its text was not one of the admin's.
printf 'sandbox:\n  network: { allow: ["github.com", "*.pypi.org", "10.0.0.0/8", "api.test:8443"] }\n' >"$A/policy.yaml"
chmod 644 "$A/policy.yaml"
for entry in github.com:443 github.com:80 GitHub.com files.pypi.org "*.files.pypi.org" files.pypi.org:443 \
	10.1.0.0/16 10.2.3.4 api.test:8443; do
	manifest "{ allow: [\"$entry\"] }" >"$T/in.yaml"
	ns "$NS" validate "$T/in.yaml" >/dev/null 2>"$T/in.err"
	rc=$?
	expect_rc "an entry the admin's list holds is allowed: $entry" 0 $rc
	[ $rc = 0 ] || head -3 "$T/in.err"
done
for entry in github.com:22 github.com:8443 pypi.org "*.pypi.org.evil.com" files.pypi.org:22 10.0.0.0/7 11.0.0.1 \
	api.test api.test:443 evil.com "0.0.0.0/0"; do
	manifest "{ allow: [\"$entry\"] }" >"$T/out.yaml"
	ns "$NS" validate "$T/out.yaml" >/dev/null 2>"$T/out.err"
	expect_rc "an entry beyond the admin's list is refused: $entry" 2 $?
	expect_grep "naming it: $entry" "allow entry '.*' is not in the admin policy" "$T/out.err"
done

# 2. NIGHTSHIFT_TEST_RESOLVE (a test-only table of name=address the egress proxy and MCP client
# believe over DNS) let whoever sets the environment send a name the admin allows to any address:
# the network floor then held nothing. Under an admin policy it is refused before anything runs.
printf 'sandbox:\n  network: { allow: ["api.test"] }\n' >"$A/policy.yaml"
manifest '{ allow: ["api.test"] }' >"$T/r.yaml"
ns "$NS" validate "$T/r.yaml" >/dev/null 2>&1
expect_rc "without the variable the manifest validates" 0 $?
NIGHTSHIFT_TEST_RESOLVE=api.test=192.0.2.1 ns "$NS" run "$T/r.yaml" --out "$T/runs" >/dev/null 2>"$T/r.err"
expect_rc "a test-only resolve table under an admin policy is refused" 2 $?
expect_grep "naming the variable" "NIGHTSHIFT_TEST_RESOLVE.*admin policy" "$T/r.err"
check "and nothing ran" test ! -d "$T/runs"

# 3. A call an admin rule decided is named as the admin's rule wherever it is told: the event's
# rule, the progress line, audit. Before: the admin's rules, appended to the worker's three, were
# told as "rule 4" and "rule 5", rules the manifest does not have.
cat >"$A/policy.yaml" <<'P'
approval:
  rules:
    - { tool: shell, command: "git push *", decision: deny }
    - { tool: shell, command: "curl *", decision: abort }
P
cat >"$T/s3.yaml" <<'S'
- tool_calls: [{ name: shell, arguments: { command: "git push origin main" } }]
- tool_calls: [{ name: shell, arguments: { command: "ls" } }]
- tool_calls: [{ name: shell, arguments: { command: "curl http://x" } }]
- tool_calls: [{ name: final_result, arguments: {} }]
S
cat >"$T/a3.yaml" <<'M'
version: 1
workspace: ws
models: { default: { provider: scripted, script: s3.yaml } }
sandbox: { backend: namespace, network: none, timeout: 30s }
workers:
  w:
    instructions: do it
    tools: [shell]
    approval:
      rules:
        - { tool: shell, command: "git push *", decision: allow }
        - { tool: shell, command: "ls", decision: allow }
        - { tool: shell, command: "curl *", decision: allow }
jobs:
  j: { worker: w, input: go }
M
run=$(ns "$NS" run "$T/a3.yaml" --out "$T/runs3" 2>"$T/a3.err")
expect_rc "the admin's abort aborts" 3 $?
expect_grep "the progress line names the admin's rule" "git push origin main: deny \(admin rule 1\)" "$T/a3.err"
expect_grep "and the abort's" "aborted by admin rule 2" "$T/a3.err"
expect_grep "the manifest's own rule keeps its number" "shell ls: allow \(rule 2\)" "$T/a3.err"
"$NS" audit "$run" >"$T/a3.audit" 2>&1
expect_grep "audit's denial names the admin's rule" "deny by admin rule 1: " "$T/a3.audit"
expect_nogrep "and no rule the manifest lacks" "by rule [45]" "$T/a3.audit"
"$NS" audit "$run" --json >"$T/a3.json" 2>&1
expect_grep "audit --json: the rule is the admin's" '"rule":"admin 2"' "$T/a3.json"
"$NS" report "$run" --out "$T/a3.html" >/dev/null 2>&1
expect_grep "report names the admin's rule" "by admin rule 1" "$T/a3.html"

# 4. policy tells an admin rule as the run's events do. Before: `policy --run --json` read a
# recorded "admin 1" as rule 0 (atoi) and told a new admin decision by its place in the joined list
# (rule 6 of a worker of three), and `policy --json` said rule 4 where the event says "admin 1".
"$NS" policy "$T/a3.yaml" --run "$run" --json >"$T/p4.json" 2>"$T/p4.err"
expect_rc "policy --run without the admin policy" 0 $?
expect_grep "the recorded admin decision keeps its rule" '"old":{"decision":"deny","rule":"admin 1"' "$T/p4.json"
expect_nogrep "never rule 0" '"rule":0' "$T/p4.json"
"$NS" policy "$T/a3.yaml" --run "$run" >"$T/p4.txt" 2>&1
expect_grep "and as text" "deny by admin rule 1 -> allow by rule 1" "$T/p4.txt"
printf '    - { tool: shell, command: "ls", decision: deny }\n' >>"$A/policy.yaml"
ns "$NS" policy "$T/a3.yaml" --run "$run" --json >"$T/p4b.json" 2>"$T/p4b.err"
expect_rc "policy --run under the admin policy" 0 $?
expect_grep "a new admin decision names the admin's rule" '"new":{"decision":"deny","rule":"admin 3"' "$T/p4b.json"
ns "$NS" policy "$T/a3.yaml" --run "$run" >"$T/p4b.txt" 2>&1
expect_grep "and as text" "allow by rule 2 -> deny by admin rule 3" "$T/p4b.txt"
ns "$NS" policy "$T/a3.yaml" --worker w --tool shell --command "git push origin main" --json >"$T/p4c.json" 2>&1
expect_grep "policy --json: the admin's rule, as the event's" '"decision":"deny","rule":"admin 1"' "$T/p4c.json"
expect_grep "its per-command decision too" '"decisions":\[{"decision":"deny","rule":"admin 1"}\]' "$T/p4c.json"

done_tests
