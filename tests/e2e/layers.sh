#!/usr/bin/env bash
# layers: the admin policy (/etc/nightshift/policy.yaml) and the user's defaults
# ($XDG_CONFIG_HOME/nightshift/config.yaml). An abort rule of the admin's aborts a manifest that
# allows everything; a manifest's larger budget is held to the admin's cap; backends and network
# beyond the admin's floors are manifest errors; a policy file others can write is refused; the
# run records the policy's digest and a copy that audit --verify holds it to; the user's models,
# out: and sandbox: serve a manifest that does not set them. The admin file's folder is a tmpfs
# mounted in a mount namespace of the test's own, so nothing of the machine's changes.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
	skip "layers" "mounting a test folder over /etc/nightshift needs root"
	done_tests
	exit
fi
[ -d /etc/nightshift ] || mkdir -p /etc/nightshift
A=$T/admin
mkdir -p "$A" "$T/ws" "$T/xdg/nightshift"
echo hello >"$T/ws/notes.txt"
# Everything below runs with $A's files as /etc/nightshift (copied into the tmpfs by `ns`).
ns() {
	unshare -m --propagation private sh -c '
		mount -t tmpfs -o mode=755 tmpfs /etc/nightshift || exit 99
		cp -p "$1"/* /etc/nightshift/ 2>/dev/null
		shift; exec "$@"' _ "$A" "$@"
}
cat >"$T/script.yaml" <<'S'
- tool_calls: [{ name: shell, arguments: { command: "wc -l notes.txt" } }]
- tool_calls: [{ name: shell, arguments: { command: "rm -f notes.txt" } }]
- tool_calls: [{ name: shell, arguments: { command: "ls" } }]
- tool_calls: [{ name: final_result, arguments: {} }]
S
cat >"$T/m.yaml" <<M
version: 1
workspace: ws
models: { default: { provider: scripted, script: script.yaml } }
sandbox: { backend: namespace, network: none, timeout: 30s }
workers:
  w:
    instructions: do it
    tools: [shell]
    max_turns: 50
    approval: { default: allow }
jobs:
  j: { worker: w, input: go }
M
cat >"$A/policy.yaml" <<'P'
approval:
  rules:
    - { tool: shell, command: "rm *", decision: abort }
max_turns: 20
sandbox:
  backend: [namespace, docker]
  network: none
  protect: ["secrets/**"]
P
chmod 644 "$A/policy.yaml"

ns "$NS" validate "$T/m.yaml" 2>"$T/v.err"
expect_rc "a manifest under the admin policy validates" 0 $?
expect_grep "validate names the admin policy" "under the admin policy /etc/nightshift/policy.yaml" "$T/v.err"
ns "$NS" policy "$T/m.yaml" --worker w --tool shell --command "rm -f notes.txt" >"$T/p.out" 2>/dev/null
expect_eq "policy says the admin's rule decided" "abort by admin rule 1 (/etc/nightshift/policy.yaml)" "$(cat "$T/p.out")"
ns "$NS" policy "$T/m.yaml" --worker w --tool shell --command "ls" >"$T/p2.out" 2>/dev/null
expect_eq "the manifest's default still decides the rest" "allow by default" "$(cat "$T/p2.out")"

ns "$NS" run "$T/m.yaml" --out "$T/runs" >"$T/run.out" 2>"$T/run.err"
expect_rc "the admin's abort rule aborts a manifest that allows everything" 3 $?
run=$(cat "$T/run.out")
check "notes.txt survived" test -f "$T/ws/notes.txt"
want=$(sha256sum "$A/policy.yaml" | cut -d' ' -f1)
got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["layers"]["admin_policy"]["sha256"])' "$run/run.json" 2>/dev/null)
expect_eq "run.json records the admin policy's sha256" "$want" "$got"
check "the run keeps a copy of the policy" cmp -s "$A/policy.yaml" "$run/manifest/layers/admin-policy.yaml"
"$NS" audit "$run" --verify >/dev/null 2>&1
expect_rc "the run verifies" 0 $?
# A replay of the record reads the admin policy where it is, not beneath the record's manifest/.
ns "$NS" replay "$run" >/dev/null 2>"$T/replay.err"
expect_rc "the run replays under the admin policy" 0 $?
expect_nogrep "and is not refused as outside the record" "not in the record's manifest folder" "$T/replay.err"
"$NS" audit "$run" >"$T/audit.out" 2>&1
expect_grep "audit shows the admin rule that aborted" "admin rule 1" "$T/audit.out"
expect_grep "audit shows the admin policy in force" "^admin policy: /etc/nightshift/policy.yaml, sha256 $want" "$T/audit.out"
# The copy changed, SHA256SUMS made to agree: run.json (sealed in the run's chain) still disagrees.
cp -r "$run" "$T/forged"
echo "approval: { rules: [] }" >"$T/forged/manifest/layers/admin-policy.yaml"
(cd "$T/forged" && sha256sum $(cut -d' ' -f3- SHA256SUMS) >SHA256SUMS.new 2>/dev/null && mv SHA256SUMS.new SHA256SUMS)
"$NS" audit "$T/forged" --verify >"$T/forged.out" 2>&1
expect_rc "a changed admin policy copy fails audit --verify" 4 $?
expect_grep "and the failure names it" "admin-policy.yaml" "$T/forged.out"

# Caps: the manifest's max_turns 50 is held to the admin's 2.
cat >"$T/script2.yaml" <<'S'
- tool_calls: [{ name: shell, arguments: { command: "ls" } }]
- tool_calls: [{ name: shell, arguments: { command: "ls" } }]
- tool_calls: [{ name: shell, arguments: { command: "ls" } }]
- tool_calls: [{ name: final_result, arguments: {} }]
S
sed 's/script.yaml/script2.yaml/' "$T/m.yaml" >"$T/m2.yaml"
sed -i 's/^max_turns: 20/max_turns: 2/' "$A/policy.yaml"
ns "$NS" run "$T/m2.yaml" --out "$T/runs" >/dev/null 2>"$T/cap.err"
expect_rc "a manifest's larger max_turns is held to the admin cap" 1 $?
expect_grep "the job stops at the admin's turn cap" "max_turns|turns" "$T/cap.err"
ns "$NS" config >"$T/config.out" 2>&1
expect_grep "config shows the cap" "max_turns: 2 a job at most" "$T/config.out"
expect_grep "config shows the floors" "sandbox backends allowed: namespace docker" "$T/config.out"

# Floors: a backend or network the admin does not allow is a manifest error at its line.
sed 's/backend: namespace, network: none/backend: none, network: none/' "$T/m.yaml" >"$T/m3.yaml"
ns "$NS" validate "$T/m3.yaml" 2>"$T/m3.err"
expect_rc "a backend the admin does not allow is refused" 2 $?
expect_grep "naming the manifest's line and the policy" "m3.yaml:[0-9]+:[0-9]+: .*backend 'none' is not allowed by the admin policy" "$T/m3.err"
sed 's/network: none, timeout/network: host, timeout/' "$T/m.yaml" >"$T/m4.yaml"
ns "$NS" validate "$T/m4.yaml" 2>"$T/m4.err"
expect_rc "network beyond the admin's is refused" 2 $?
expect_grep "saying what the admin allows" "more than the admin policy .* allows \(none\)" "$T/m4.err"

# A policy file that others can write (or owned by another user) is refused, before anything runs.
chmod 666 "$A/policy.yaml"
ns "$NS" validate "$T/m.yaml" 2>"$T/w.err"
expect_rc "a policy file writable by others is refused" 2 $?
expect_grep "saying why" "admin policy is refused: the file /etc/nightshift/policy.yaml is writable by anyone" "$T/w.err"
chmod 644 "$A/policy.yaml" && chown 1234 "$A/policy.yaml"
ns "$NS" validate "$T/m.yaml" 2>"$T/o.err"
expect_rc "a policy file owned by another user is refused" 2 $?
expect_grep "naming the owner" "owned by uid 1234, not root" "$T/o.err"
# A policy a user cannot read stops that user, saying why and what to do.
chown 0 "$A/policy.yaml" && chmod 600 "$A/policy.yaml"
if command -v setpriv >/dev/null; then
	chmod 755 "$T" && chmod -R a+rX "$T/ws" "$T/m.yaml" "$T/script.yaml"
	ns setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent "$NS" validate "$T/m.yaml" 2>"$T/r.err"
	expect_rc "a policy the user cannot read stops the user" 2 $?
	expect_grep "naming the remedy" "admin policy cannot be read by uid 65534.*chmod 644" "$T/r.err"
fi
rm -f "$A/policy.yaml"

# A cost cap holds at the admin's prices: a manifest's price of 0 (or a --model to a model it gives
# no price for) made the cap hold nothing, the job spending on at $0.0000.
if command -v python3 >/dev/null; then
	echo '{"window": 200000, "seed": 1, "roles": {"boss": {"turns": 8, "command": "true", "output": [300, 300]}}}' >"$T/lm.json"
	python3 "$ROOT/tests/longmodel.py" "$T/lm.json" "$T/lm.port" "$T/lm.log" & LM=$!
	waitfor 60 test -s "$T/lm.port"
	url="http://127.0.0.1:$(cat "$T/lm.port")/v1"
	cat >"$T/free.yaml" <<M
version: 1
workspace: ws
models:
  default: { provider: openai, base_url: "$url", model: mock, retries: 0, max_output_tokens: 300,
             price: { input: 0, output: 0 } }
workers:
  boss: { instructions: "ROLE=boss", tools: [shell], approval: { default: allow }, max_cost: 100 }
jobs:
  j: { worker: boss, max_cost: 100 }
M
	printf 'max_cost: 0.001\n' >"$A/policy.yaml"
	ns "$NS" validate "$T/free.yaml" 2>"$T/price0.err"
	expect_rc "under an admin cost cap, a model of price 0 the policy gives no price for is refused" 2 $?
	expect_grep "naming the model and the remedy" "free.yaml:4:[0-9]+: model 'default' \(mock\): the admin policy .* caps cost, and this model has a price of 0: .*prices" "$T/price0.err"
	sed 's/input: 0, output: 0/input: 2.5, output: 10/' "$T/free.yaml" >"$T/priced.yaml"
	ns "$NS" run "$T/priced.yaml" --out "$T/runs" >/dev/null 2>"$T/pricem.err"
	expect_rc "without the admin's price, a manifest's own price stands: the job stops at the admin's cap" 1 $?
	expect_grep "at the admin's cap" 'max_cost \(\$0\.0010\) of job j would be passed' "$T/pricem.err"
	printf 'max_cost: 0.001\nprices:\n  mock: { input: 2.5, output: 10 }\n' >"$A/policy.yaml"
	ns "$NS" run "$T/free.yaml" --out "$T/runs" >/dev/null 2>"$T/price1.err"
	expect_rc "a manifest's price of 0 does not lift the admin's max_cost" 1 $?
	expect_grep "the job stops at the admin's cap, at the admin's price" 'max_cost \(\$0\.0010\) of job j would be passed' "$T/price1.err"
	ns "$NS" run "$T/free.yaml" --out "$T/runs" --model "default=openai:other@$url" >/dev/null 2>"$T/price2.err"
	expect_rc "--model to a model the admin gives no price for is refused" 2 $?
	expect_grep "saying so" "--model default=openai:other@.*(gives no price|no price)" "$T/price2.err"
	ns "$NS" config >"$T/pconf.out" 2>&1
	expect_grep "config shows the admin's prices" "price of mock at least: input 2.5, cached_input 2.5, output 10" "$T/pconf.out"
	# Without an admin policy, the manifest's own max_cost holds across --model too.
	sed 's/input: 0, output: 0/input: 2.5, output: 10/; s/max_cost: 100 }$/max_cost: 0.001 }/' "$T/free.yaml" >"$T/own.yaml"
	rm -f "$A/policy.yaml"
	ns "$NS" run "$T/own.yaml" --out "$T/runs" --model "default=openai:other@$url" >/dev/null 2>"$T/price3.err"
	expect_rc "--model to an unpriced model under a job's max_cost is refused" 2 $?
	expect_grep "naming the job" "'j' has a cost budget" "$T/price3.err"
	kill $LM 2>/dev/null; wait $LM 2>/dev/null
fi

# The user's defaults: models, out and sandbox for a manifest that sets none of them.
cat >"$T/xdg/nightshift/config.yaml" <<C
models:
  default: { provider: scripted, script: $T/script2.yaml }
out: $T/userruns
sandbox: { timeout: 20s }
C
cat >"$T/m5.yaml" <<'M'
version: 1
workspace: ws
workers:
  w:
    instructions: do it
    tools: [shell]
    approval: { default: allow }
jobs:
  j: { worker: w, input: go }
M
XDG_CONFIG_HOME=$T/xdg ns "$NS" run "$T/m5.yaml" >"$T/u.out" 2>"$T/u.err"
expect_rc "a manifest with no models runs on the user's" 0 $?
expect_grep "in the user's out folder" "^$T/userruns/" "$T/u.out"
urun=$(cat "$T/u.out")
check "the run keeps the user's defaults" cmp -s "$T/xdg/nightshift/config.yaml" "$urun/manifest/layers/user-config.yaml"
XDG_CONFIG_HOME=$T/xdg ns "$NS" replay "$urun" >/dev/null 2>"$T/ureplay.err"
expect_rc "a run replays with the user's defaults" 0 $?
# A record made before the policy existed replays under it: the admin's abort decides the call.
printf 'approval:\n  rules:\n    - { tool: shell, command: "ls", decision: abort }\n' >"$A/policy.yaml"
XDG_CONFIG_HOME=$T/xdg ns "$NS" replay "$urun" >/dev/null 2>"$T/areplay.err"
expect_rc "replaying it under an admin abort rule diverges" 4 $?
expect_grep "the admin's rule decides the replayed call" "recorded allow, replayed abort" "$T/areplay.err"
rm -f "$A/policy.yaml"
XDG_CONFIG_HOME=$T/xdg ns "$NS" config "$T/m5.yaml" >"$T/c5.out" 2>&1
expect_grep "config says where the model came from" "model default: .*\(user defaults, $T/xdg/nightshift/config.yaml:2\)" "$T/c5.out"
expect_grep "config prints the user's sandbox defaults" '^  sandbox: \{"timeout":"20s"\}' "$T/c5.out"
# out: ~/DIR is beneath HOME, as a shell would read it (docs/install.md's example).
mkdir -p "$T/home/.config/nightshift"
sed "s|^out: .*|out: ~/tilderuns|" "$T/xdg/nightshift/config.yaml" >"$T/home/.config/nightshift/config.yaml"
HOME=$T/home XDG_CONFIG_HOME= ns "$NS" run "$T/m5.yaml" >"$T/t.out" 2>"$T/t.err"
expect_rc "a user config with out: ~/DIR runs" 0 $?
expect_grep "its runs go beneath HOME" "^$T/home/tilderuns/" "$T/t.out"
# config says each mistake once, of a manifest or of the layers alone.
printf 'version: 1\nworkspace: ws\nmodels: { default: { provider: scripted, script: script.yaml } }\nworkers: { w: { instructions: x, tols: [] } }\njobs: { j: { worker: w, inptu: go } }\n' >"$T/m6.yaml"
XDG_CONFIG_HOME=$T/xdg ns "$NS" config "$T/m6.yaml" >/dev/null 2>"$T/c6.err"
expect_rc "config of a manifest with mistakes: exit 2" 2 $?
expect_eq "config says each of its mistakes once" 2 "$(grep -c 'unknown key' "$T/c6.err")"
mkdir -p "$T/xdg7/nightshift" && printf 'outt: x\nsandbox: { timeout: abc }\n' >"$T/xdg7/nightshift/config.yaml"
XDG_CONFIG_HOME=$T/xdg7 ns "$NS" config >/dev/null 2>"$T/c7.err"
expect_rc "config with a user config with mistakes: exit 2" 2 $?
expect_eq "config says each of the layers' mistakes once" 2 "$(grep -c 'config.yaml:[0-9]*:[0-9]*: ' "$T/c7.err")"
ns "$NS" validate "$T/m5.yaml" 2>"$T/m5.err"
expect_rc "without the user's defaults the manifest lacks models" 2 $?
expect_grep "and says where they could come from" "missing 'models'" "$T/m5.err"
done_tests
