#!/usr/bin/env bash
# preflight: what a run needs from outside (API keys, a base_url's host, the Docker engine and its
# image) is checked before the first model call: a missing one is exit 2, every problem said at
# once, no model request sent (the loopback mock counts them), no run directory made, and the
# workspace untouched. (The image check against a real engine is in e2e/docker.)
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { skip "preflight" "python3 is needed for the mock server"; done_tests; exit; }
MOCKPID=
trap '[ -n "$MOCKPID" ] && kill $MOCKPID 2>/dev/null; rm -rf "$T"' EXIT
echo '[{"openai_calls": [["write_file", {"path": "touched", "content": "x"}]]}, {"openai_calls": [["final_result", {"ok": true}]]}]' >"$T/script.json"
: >"$T/mock.log"
python3 "$ROOT/tests/mockmodel.py" "$T/script.json" "$T/port" "$T/mock.log" & MOCKPID=$!
waitfor 60 test -s "$T/port"
PORT=$(cat "$T/port")
mkdir -p "$T/ws"

manifest() {  # manifest MODEL_KEYS [SANDBOX_KEYS]
	cat >"$T/m.yaml" <<YAML
version: 1
workspace: ws
models:
  default: { provider: openai, model: mock-1, $1 }
sandbox: { ${2:-backend: namespace} }
workers:
  w:
    instructions: Write a file.
    tools: [write_file]
    approval: { rules: [ { tool: write_file, decision: allow } ] }
    output: { type: object, required: [ok], properties: { ok: { type: boolean } } }
jobs:
  j: { worker: w, input: go }
YAML
}
run() { "$NS" run "$T/m.yaml" --out "$T/runs" >"$T/out" 2>"$T/err"; rc=$?; }
nothing() {  # nothing LABEL: no request, no run directory, workspace untouched
	expect_eq "$1: no model request sent" 0 "$(wc -l <"$T/mock.log")"
	check "$1: no run directory made" test -z "$(ls -A "$T/runs" 2>/dev/null)"
	check "$1: the workspace untouched" test ! -e "$T/ws/touched"
	expect_eq "$1: nothing on stdout" "" "$(cat "$T/out")"
}

unset NS_PREFLIGHT_KEY
manifest "base_url: \"http://127.0.0.1:$PORT/v1\", api_key_env: NS_PREFLIGHT_KEY"
run
expect_rc "an API key not set: exit 2" 2 "$rc"
expect_grep "naming the model and the variable" "model 'default': environment variable NS_PREFLIGHT_KEY is not set" "$T/err"
nothing "key"
"$NS" validate "$T/m.yaml" >"$T/out" 2>"$T/err"
expect_rc "validate: the same unset key is a warning, exit 0" 0 "$?"
# Line 4 is the model's; the column that of the api_key_env key, not the model's.
col=$(awk 'NR == 4 { print index($0, "api_key_env") }' "$T/m.yaml")
expect_grep "at the api_key_env key's file:line:col" \
	"^nightshift: $T/m.yaml:4:$col: warning: model 'default': environment variable NS_PREFLIGHT_KEY is not set \\(api_key_env\\)$" "$T/err"
expect_grep "and still valid" "ok \\(1 models" "$T/err"
sed -i 's/, api_key_env: NS_PREFLIGHT_KEY//' "$T/m.yaml"
OPENAI_API_KEY= "$NS" validate "$T/m.yaml" >"$T/out" 2>"$T/err"
expect_rc "validate: a base_url with no api_key_env needs no key: exit 0" 0 "$?"
expect_nogrep "and no warning" "warning" "$T/err"
cat >"$T/m2.yaml" <<YAML
version: 1
models:
  default: { provider: anthropic, model: claude-x }
  spare: { provider: openai, model: gpt-x, api_key_env: NS_PREFLIGHT_SPARE }
workers:
  w: { instructions: go, output: { type: object } }
jobs:
  j: { worker: w, input: go }
YAML
ANTHROPIC_API_KEY= "$NS" validate "$T/m2.yaml" >"$T/out" 2>"$T/err"
expect_rc "validate: the provider's own key unset: exit 0" 0 "$?"
expect_grep "a warning at the model (no api_key_env written)" \
	"^nightshift: $T/m2.yaml:3:12: warning: model 'default': environment variable ANTHROPIC_API_KEY is not set \\(name another with api_key_env\\)$" "$T/err"
expect_nogrep "no warning for a model no job uses" "spare" "$T/err"

export NS_PREFLIGHT_KEY=k
manifest "base_url: \"http://no-such-host.invalid/v1\", api_key_env: NS_PREFLIGHT_KEY"
run
expect_rc "a base_url whose host does not resolve: exit 2" 2 "$rc"
expect_grep "naming it" "base_url http://no-such-host.invalid/v1 does not resolve" "$T/err"
nothing "host"
manifest "base_url: \"http://no-such-host.invalid/v1\", api_key_env: NS_PREFLIGHT_KEY, retries: 0"
http_proxy=http://127.0.0.1:9 run
expect_rc "behind a proxy (which resolves names) the run starts and its job fails at the model" 1 "$rc"
expect_nogrep "not for the name" "does not resolve" "$T/err"
rm -rf "$T/runs"

unset NS_PREFLIGHT_KEY
manifest "base_url: \"http://no-such-host.invalid/v1\", api_key_env: NS_PREFLIGHT_KEY" \
	"backend: docker, image: nightshift-test:busybox"
DOCKER_HOST=unix://$T/no-engine.sock run
expect_rc "no key, no host, no engine: exit 2" 2 "$rc"
expect_grep "every problem at once: the key" "NS_PREFLIGHT_KEY is not set" "$T/err"
expect_grep "the host" "no-such-host.invalid" "$T/err"
expect_grep "the engine, for the job" "job 'j': .*unix://$T/no-engine.sock" "$T/err"
nothing "engine"

export NS_PREFLIGHT_KEY=k
manifest "base_url: \"http://127.0.0.1:$PORT/v1\", api_key_env: NS_PREFLIGHT_KEY"
run
expect_rc "all there: the job runs" 0 "$rc"
check "and wrote its file" test -e "$T/ws/touched"
expect_eq "after two model requests" 2 "$(wc -l <"$T/mock.log")"
done_tests
