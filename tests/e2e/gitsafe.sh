#!/usr/bin/env bash
# gitsafe: git in a step works on a checkout another uid owns (a root clone, root's cron): the
# sandbox sets safe.directory for the workspace through GIT_CONFIG_COUNT/KEY_n/VALUE_n, after the
# manifest's own entries. Namespace backend (the runner root, the checkout uid 1001's, which the
# sandbox does not map: nobody inside) and none backend (the runner root on a checkout of 1001).
# A namespace checkout the runner could not write from the sandbox is refused up front.
# The docker backend's cases are in e2e/dockerowner.
source "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
	skip gitsafe "needs root to give the checkout to another uid"
	done_tests
	exit
fi
if ! command -v git >/dev/null; then
	skip gitsafe "no git on this machine (apt-get install git)"
	done_tests
	exit
fi
chmod 0755 "$T"
export GIT_CONFIG_NOSYSTEM=1 HOME=$T/home
mkdir -p "$HOME"

# one BACKEND: a job on a checkout of uid 1001 whose steps run git; prints its shell results
one() {
	local b=$1 ws=$T/ws-$1
	mkdir -p "$ws"
	git -C "$ws" init -q -b main
	echo hello >"$ws/a.txt"
	git -C "$ws" add a.txt
	git -C "$ws" -c user.name=t -c user.email=t@t commit -q -m first
	chown -R 1001:1001 "$ws"
	chmod -R a+rwX "$ws"
	{
		for s in "git log --format=%s" "git config user.name" 'echo "$GIT_CONFIG_COUNT"'; do
			printf -- '- tool_calls:\n    - { name: shell, arguments: { command: %s } }\n' \
				"$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$s")"
		done
		printf -- '- tool_calls:\n    - { name: final_result, arguments: { done: true } }\n'
	} >"$T/$b.script"
	cat >"$T/$b.yaml" <<YAML
version: 1
name: gitsafe-$b
workspace: ws-$b
models:
  default: { provider: scripted, script: $b.script }
sandbox:
  backend: $b
  network: none
  env: [PATH, GIT_CONFIG_COUNT=1, GIT_CONFIG_KEY_0=user.name, GIT_CONFIG_VALUE_0=Night]
workers:
  w:
    instructions: Look.
    tools: [shell]
    approval:
      default: deny
      rules:
        - { tool: shell, command: "*", decision: allow }
    output: { type: object, required: [done], properties: { done: { type: boolean } } }
jobs:
  look: { worker: w, input: go }
YAML
	(cd "$T" && "$NS" run "$b.yaml" --out "$T/runs-$b" >"$T/$b.out" 2>"$T/$b.err")
	local rc=$?
	expect_rc "$b: the job runs" 0 "$rc"
	[ "$rc" = 0 ] || tail -n 5 "$T/$b.err"
	zstd -dcq "$(cat "$T/$b.out")/jobs/look/events.jsonl.zst" 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    e = json.loads(line)
    if e.get("type") == "tool_result" and e.get("tool") == "shell":
        print("%s\t%s %s" % (e.get("exit_code"), (e.get("stdout") or "").replace("\n", " "), (e.get("stderr") or "").replace("\n", " ")))
' >"$T/$b.res"
	expect_eq "$b: git log works on a checkout of uid 1001" "$(printf '0\tfirst  ')" "$(sed -n 1p "$T/$b.res")"
	expect_eq "$b: the manifest's GIT_CONFIG entries hold" "$(printf '0\tNight  ')" "$(sed -n 2p "$T/$b.res")"
	expect_eq "$b: safe.directory is appended to them" "$(printf '0\t3  ')" "$(sed -n 3p "$T/$b.res")"
}
one none
# without GIT_CONFIG entries of the manifest's: safe.directory alone
sed -i 's/env: \[PATH, .*\]/env: [PATH]/' "$T/none.yaml"
(cd "$T" && "$NS" run none.yaml --out "$T/runs-bare" >"$T/bare.out" 2>"$T/bare.err"); rc=$?
expect_rc "none, no GIT_CONFIG in the manifest: the job runs" 0 "$rc"
expect_eq "and git log works" "0 first" "$(zstd -dcq "$(cat "$T/bare.out")/jobs/look/events.jsonl.zst" 2>/dev/null |
	python3 -c 'import json,sys
for l in sys.stdin:
    e = json.loads(l)
    if e.get("type") == "tool_result" and e.get("tool") == "shell":
        print(e.get("exit_code"), (e.get("stdout") or "").strip()); break')"
if userns; then
	one namespace
	# and one the runner (root) could not write from the sandbox: refused before anything runs
	chmod -R go-w "$T/ws-namespace"
	(cd "$T" && "$NS" run namespace.yaml --out "$T/runs-ro" >/dev/null 2>"$T/nsro.err"); rc=$?
	expect_rc "namespace: a checkout of 1001, 0755, under a root runner is refused (exit 2)" 2 "$rc"
	expect_grep "naming the owner and the fix" "owned by uid 1001.*chown -R 0:0 $T/ws-namespace" "$T/nsro.err"
	expect_nogrep "before the job started" "started" "$T/nsro.err"
	(cd "$T" && "$NS" doctor namespace.yaml >"$T/nsro.doc" 2>&1)
	expect_grep "doctor says the same" "^FAIL +workspace owner.*owned by uid 1001" "$T/nsro.doc"
	chown 0:0 "$T/ws-namespace"
	(cd "$T" && "$NS" doctor namespace.yaml >"$T/nsok.doc" 2>&1)
	expect_grep "doctor passes it once the runner owns it" "^ok +workspace owner" "$T/nsok.doc"
else
	skip "gitsafe namespace" "no user namespaces here"
fi
done_tests
