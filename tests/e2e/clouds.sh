#!/usr/bin/env bash
# clouds: the providers that wrap OpenAI's and Anthropic's wire formats, against tests/cloudmock.py,
# a loopback stand-in that checks what each real service checks: the Responses API's item rules for
# stateless use (store: false, encrypted reasoning sent back before its function call, every
# function_call answered), Azure's path, api-version query and api-key header (or an Entra ID bearer
# token), Bedrock's AWS SigV4 signature (recomputed in Python from the documented algorithm, with a
# session token) and body, Vertex's path and bearer token; and per-model headers and query values
# (from ${{ env.X }}, masked in the artifacts), a base_url holding a query.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { skip "clouds" "python3 is needed for the mock server"; 
# --- strict: a closed output schema goes with strict: true; a root that is not an object is refused ---
mock '{"mode": "responses", "key": "sk-test-responses-key-0123456789"}'
manifest "provider: openai, api: responses, model: m, base_url: \"http://127.0.0.1:$PORT/v1\", api_key_env: NS_OAI_KEY"
sed -i 's/properties: { verdict: { enum: \[ok, bad\] } } }/properties: { verdict: { enum: [ok, bad] } }, additionalProperties: false }/' "$T/m.yaml"
run "strict"
expect_eq "strict: a closed schema with every property required goes strict" True "$(q '[t["strict"] for t in reqs[0]["body"]["tools"] if t["name"]=="final_result"][0]')"
sed -i 's/output: { type: object, required: \[verdict\].*$/output: { type: string }/' "$T/m.yaml"
"$NS" validate "$T/m.yaml" >/dev/null 2>"$T/err"; rc=$?
expect_rc "an output schema whose root is a string: a manifest error" 2 "$rc"
expect_grep "at the type, with the reason" "m.yaml:[0-9]+:[0-9]+: output schema: the root must be an object" "$T/err"
done_tests; exit; }
MOCKPID=
trap '[ -n "$MOCKPID" ] && kill $MOCKPID 2>/dev/null; rm -rf "$T"' EXIT
mkdir -p "$T/ws"
echo data >"$T/ws/file.txt"

mock() {  # mock CONFIG_JSON: (re)starts the mock; sets PORT, empties the log
	[ -n "$MOCKPID" ] && { kill $MOCKPID 2>/dev/null; wait $MOCKPID 2>/dev/null; }
	printf '%s' "$1" >"$T/config.json"
	: >"$T/log"; rm -f "$T/port"
	python3 "$ROOT/tests/cloudmock.py" "$T/config.json" "$T/port" "$T/log" & MOCKPID=$!
	waitfor 60 test -s "$T/port"
	PORT=$(cat "$T/port")
}
manifest() {  # manifest MODEL_KEYS
	cat >"$T/m.yaml" <<YAML
version: 1
workspace: ws
models:
  default: { $1, retries: 0 }
workers:
  w:
    instructions: Look, then report.
    tools: [list_dir]
    approval: { rules: [ { tool: list_dir, decision: allow } ] }
    output: { type: object, required: [verdict], properties: { verdict: { enum: [ok, bad] } } }
jobs:
  j: { worker: w, input: go }
YAML
}
run() {  # run LABEL: runs the manifest; the job must succeed on the mock's two turns, none refused
	local L=$1
	dir=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
	expect_rc "$L: the job succeeds" 0 "$rc"
	[ "$rc" = 0 ] || { tail -n 5 "$T/err"; python3 -c 'import json,sys
for l in open(sys.argv[1]): print(json.loads(l)["problems"])' "$T/log"; }
	expect_eq "$L: two requests, none refused" "2 0" "$(python3 -c 'import json,sys
r=[json.loads(l) for l in open(sys.argv[1])]; print(len(r), sum(1 for x in r if x["problems"]))' "$T/log")"
	expect_eq "$L: the output" '{"verdict": "ok"}' "$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))))' "$dir/jobs/j/output.json" 2>&1)"
	zstd -dcq "$dir/jobs/j/events.jsonl.zst" >"$T/ev.jsonl" 2>/dev/null
	case $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["mode"])' "$T/config.json") in
	responses | azure-*)
		if python3 -c 'import jsonschema' 2>/dev/null; then
			expect_eq "$L: every body checked against OpenAI's OpenAPI document" 2 "$(q 'sum(1 for r in reqs if r["schema"])')"
		else
			skip "$L: bodies against OpenAI's OpenAPI document" "no python3-jsonschema (ci/packages.txt installs it)"
		fi ;;
	esac
}
q() { python3 -c "import json,sys
reqs=[json.loads(l) for l in open('$T/log')]
ev=[json.loads(l) for l in open('$T/ev.jsonl')] if '$T' else []
print($1)"; }

# --- OpenAI Responses API ---
export NS_OAI_KEY=sk-test-responses-key-0123456789
mock '{"mode": "responses", "key": "sk-test-responses-key-0123456789"}'
manifest "provider: openai, api: responses, model: gpt-5-codex, base_url: \"http://127.0.0.1:$PORT/v1\", api_key_env: NS_OAI_KEY, reasoning_effort: high, max_output_tokens: 4000"
run "responses"
expect_eq "responses: reasoning effort and output cap sent" "high 4000" "$(q 'reqs[0]["body"]["reasoning"]["effort"], reqs[0]["body"]["max_output_tokens"]' | tr -d "(),'")"
expect_eq "responses: the encrypted reasoning went back unchanged" "enc-secret-1" "$(q '[i.get("encrypted_content") for i in reqs[1]["body"]["input"] if i.get("type")=="reasoning"][0]')"
expect_eq "responses: the tool result as a function_call_output" "call_0" "$(q '[i["call_id"] for i in reqs[1]["body"]["input"] if i.get("type")=="function_call_output"][0]')"
expect_eq "responses: built-in tools strict, final_result not (its schema is open), a call required" \
	"list_dir:True final_result:False required" \
	"$(q '" ".join("%s:%s" % (t["name"], t["strict"]) for t in reqs[0]["body"]["tools"]) + " " + reqs[0]["body"]["tool_choice"]')"
"$NS" replay "$dir" --out "$T/replays" >/dev/null 2>"$T/rerr"; rc=$?
expect_rc "responses: replay offline matches the record (reasoning items included)" 0 "$rc"
[ "$rc" = 0 ] || tail -n 3 "$T/rerr"
expect_eq "responses: usage with cached and reasoning tokens" "240 100 200 60" "$(q '" ".join(str(sum(e["usage"][k] for e in ev if e["type"]=="model_response")) for k in ("input","output","cached","reasoning"))')"
if python3 -c 'import jsonschema' 2>/dev/null; then
	mock '{"mode": "responses", "key": "sk-test-responses-key-0123456789"}'
	manifest "provider: openai, api: responses, model: m, base_url: \"http://127.0.0.1:$PORT/v1\", api_key_env: NS_OAI_KEY, max_output_tokens: 10"
	"$NS" run "$T/m.yaml" --out "$T/runs" >/dev/null 2>"$T/err"; rc=$?
	expect_rc "responses: a body the OpenAPI document refuses is refused (max_output_tokens below 16)" 1 "$rc"
	expect_grep "naming the rule" "OpenAPI .*10 is less than the minimum of 16" "$T/err"
fi

# --- Azure OpenAI: chat, then responses, then an Entra ID token ---
export NS_AZ_KEY=az-test-key-abcdef0123456789
mock '{"mode": "azure-chat", "key": "az-test-key-abcdef0123456789", "deployment": "gpt5-prod", "api_version": "2024-10-21"}'
manifest "provider: azure-openai, model: gpt-5, base_url: \"http://127.0.0.1:$PORT\", deployment: gpt5-prod, api_version: \"2024-10-21\", api_key_env: NS_AZ_KEY, max_output_tokens: 1000"
run "azure chat"
expect_eq "azure chat: tool_choice required, strict kept" "required True" "$(q 'reqs[0]["body"]["tool_choice"], reqs[0]["body"]["tools"][0]["function"]["strict"]' | tr -d "(),'")"
expect_eq "azure chat: max_completion_tokens" 1000 "$(q 'reqs[0]["body"].get("max_completion_tokens")')"
mock '{"mode": "azure-responses", "key": "az-test-key-abcdef0123456789", "deployment": "codex-dep", "api_version": "2025-04-01-preview"}'
manifest "provider: azure-openai, api: responses, model: gpt-5-codex, base_url: \"http://127.0.0.1:$PORT/\", deployment: codex-dep, api_key_env: NS_AZ_KEY"
run "azure responses"
export NS_AZ_TOKEN=eyJ-entra-token-0123456789
mock '{"mode": "azure-chat", "key": "eyJ-entra-token-0123456789", "bearer": true, "deployment": "gpt5-prod", "api_version": "2025-04-01-preview"}'
manifest "provider: azure-openai, model: gpt-5, base_url: \"http://127.0.0.1:$PORT\", deployment: gpt5-prod, api_version: \"2025-04-01-preview\", auth: bearer, api_key_env: NS_AZ_TOKEN"
run "azure entra id"
manifest "provider: azure-openai, model: gpt-5, base_url: \"http://127.0.0.1:$PORT\", deployment: gpt5-prod, api_version: \"2025-04-01-preview\", api_key_env: NS_AZ_KEY"
"$NS" run "$T/m.yaml" --out "$T/runs" >/dev/null 2>"$T/err"; rc=$?
expect_rc "azure: an api-key where the resource wants a bearer token is refused (401, not retried)" 1 "$rc"
expect_grep "and the error says why" "HTTP 401.*Authorization is not Bearer TOKEN" "$T/err"

# --- Amazon Bedrock: SigV4 with a session token ---
export AWS_ACCESS_KEY_ID=AKIDEXAMPLE0123 AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI-test-secret-0123 AWS_SESSION_TOKEN=IQoJb3JpZ2luX2VjEXAMPLE-session-token
unset AWS_REGION AWS_DEFAULT_REGION
model=anthropic.claude-sonnet-4-5-20250929-v1:0
mock "{\"mode\": \"bedrock\", \"access\": \"$AWS_ACCESS_KEY_ID\", \"secret\": \"$AWS_SECRET_ACCESS_KEY\", \"token\": \"$AWS_SESSION_TOKEN\", \"region\": \"eu-west-3\", \"model\": \"$model\"}"
manifest "provider: bedrock, model: \"$model\", region: eu-west-3, base_url: \"http://127.0.0.1:$PORT\""
run "bedrock"
for v in "$AWS_SECRET_ACCESS_KEY" "$AWS_SESSION_TOKEN"; do
	check "bedrock: the AWS secret ${v:0:6}... is in no artifact" bash -c "! zstd -dcq '$dir'/jobs/*/events.jsonl.zst | grep -qF '$v' && ! grep -rqF '$v' '$dir'"
done
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN "$NS" replay "$dir" --out "$T/replays" >/dev/null 2>"$T/rerr"; rc=$?
expect_rc "bedrock: replay offline, without credentials, matches the record" 0 "$rc"
[ "$rc" = 0 ] || tail -n 3 "$T/rerr"
AWS_SECRET_ACCESS_KEY=not-the-secret "$NS" run "$T/m.yaml" --out "$T/runs" >/dev/null 2>"$T/err"; rc=$?
expect_rc "bedrock: a wrong secret fails the signature check" 1 "$rc"
expect_grep "and the mock said so" "SigV4 signature mismatch" "$T/log"
env -u AWS_ACCESS_KEY_ID "$NS" run "$T/m.yaml" --out "$T/runs2" >/dev/null 2>"$T/err"; rc=$?
expect_rc "bedrock: no credentials: exit 2 before anything" 2 "$rc"
expect_grep "naming the variables" "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" "$T/err"

mock "{\"mode\": \"bedrock-converse\", \"access\": \"$AWS_ACCESS_KEY_ID\", \"secret\": \"$AWS_SECRET_ACCESS_KEY\", \"token\": \"$AWS_SESSION_TOKEN\", \"region\": \"us-west-2\", \"model\": \"amazon.nova-pro-v1:0\"}"
manifest "provider: bedrock, api: converse, model: \"amazon.nova-pro-v1:0\", base_url: \"http://127.0.0.1:$PORT\""
AWS_REGION=us-west-2 run "bedrock converse"
expect_eq "converse: the tool result answers its toolUse in the next user message" "tooluse_0" "$(q '[b["toolResult"]["toolUseId"] for m in reqs[1]["body"]["messages"] for b in m["content"] if "toolResult" in b][0]')"
expect_eq "converse: usage counts the cache read in the input" "200 24 20" "$(q '" ".join(str(sum(e["usage"][k] for e in ev if e["type"]=="model_response")) for k in ("input","output","cached"))')"

# --- Vertex AI ---
export NS_GCP_TOKEN=ya29.test-access-token-0123456789
mock '{"mode": "vertex", "key": "ya29.test-access-token-0123456789", "project": "my-proj", "region": "us-east5", "model": "claude-sonnet-4-5@20250929"}'
manifest "provider: vertex, model: \"claude-sonnet-4-5@20250929\", project: my-proj, region: us-east5, api_key_env: NS_GCP_TOKEN, base_url: \"http://127.0.0.1:$PORT\""
run "vertex"

# --- per-model headers and query, a base_url holding a query ---
export NS_GW_TOKEN=gw-secret-token-0123456789
mock '{"mode": "azure-chat", "key": "az-test-key-abcdef0123456789", "deployment": "gpt5-prod", "api_version": "2024-10-21", "headers": {"X-Gateway-Token": "gw-secret-token-0123456789", "X-Team": "nightly"}, "query": {"tenant": "a b&c"}}'
manifest "provider: azure-openai, model: gpt-5, base_url: \"http://127.0.0.1:$PORT?tenant=a%20b%26c\", deployment: gpt5-prod, api_version: \"2024-10-21\", api_key_env: NS_AZ_KEY, headers: { X-Gateway-Token: \"\${{ env.NS_GW_TOKEN }}\", X-Team: nightly }"
run "headers and a base_url query"
expect_eq "the path came before the query" "/openai/deployments/gpt5-prod/chat/completions" "$(q 'reqs[0]["path"].split("?")[0]')"
check "the header from the environment is in no artifact" bash -c "! zstd -dcq '$dir'/jobs/*/events.jsonl.zst | grep -qF gw-secret-token && ! grep -rqF gw-secret-token '$dir'"
mock '{"mode": "responses", "key": "sk-test-responses-key-0123456789", "query": {"tenant": "a b&c", "v": "2"}}'
manifest "provider: openai, api: responses, model: m, base_url: \"http://127.0.0.1:$PORT/v1\", api_key_env: NS_OAI_KEY, query: { tenant: \"a b&c\", v: \"2\" }"
run "query: values encoded"
manifest "provider: openai, model: m, base_url: \"http://127.0.0.1:1/v1\", headers: { \"Bad Name\": x }"
"$NS" validate "$T/m.yaml" >/dev/null 2>"$T/err"; rc=$?
expect_rc "a header name with a space: a manifest error" 2 "$rc"
expect_grep "at its place" "m.yaml:[0-9]+:[0-9]+: 'Bad Name' is not a header name" "$T/err"

# --- strict: a closed output schema goes with strict: true; a root that is not an object is refused ---
mock '{"mode": "responses", "key": "sk-test-responses-key-0123456789"}'
manifest "provider: openai, api: responses, model: m, base_url: \"http://127.0.0.1:$PORT/v1\", api_key_env: NS_OAI_KEY"
sed -i 's/properties: { verdict: { enum: \[ok, bad\] } } }/properties: { verdict: { enum: [ok, bad] } }, additionalProperties: false }/' "$T/m.yaml"
run "strict"
expect_eq "strict: a closed schema with every property required goes strict" True "$(q '[t["strict"] for t in reqs[0]["body"]["tools"] if t["name"]=="final_result"][0]')"
sed -i 's/output: { type: object, required: \[verdict\].*$/output: { type: string }/' "$T/m.yaml"
"$NS" validate "$T/m.yaml" >/dev/null 2>"$T/err"; rc=$?
expect_rc "an output schema whose root is a string: a manifest error" 2 "$rc"
expect_grep "at the type, with the reason" "m.yaml:[0-9]+:[0-9]+: output schema: the root must be an object" "$T/err"
done_tests
