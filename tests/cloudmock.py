#!/usr/bin/env python3
"""A loopback stand-in for the cloud model endpoints, checking what the real services check.

usage: cloudmock.py CONFIG.json PORTFILE LOGFILE

CONFIG: {"mode": M, ...} with M one of
  responses        OpenAI POST /v1/responses (Authorization: Bearer KEY)
  azure-chat       Azure POST /openai/deployments/DEPLOYMENT/chat/completions?api-version=V (api-key: KEY)
  azure-responses  Azure POST /openai/responses?api-version=V (api-key: KEY), model = DEPLOYMENT
  bedrock          Bedrock POST /model/MODEL/invoke, AWS SigV4 (region, service bedrock) recomputed here
                   from the documented algorithm with "access"/"secret"/"token"; body anthropic_version
                   bedrock-2023-05-31, no model
  bedrock-converse the same signing, POST /model/MODEL/converse: the Converse API's message rules
                   (roles alternate from user; each toolUse answered by a toolResult with its id in the
                   next user message; toolSpec with inputSchema.json)
  vertex           Vertex POST /v1/projects/P/locations/R/publishers/anthropic/models/M:rawPredict,
                   Authorization: Bearer TOKEN; body anthropic_version vertex-2023-10-16, no model
Streaming, as each service does it: Azure answers OpenAI's server-sent events when the body says
"stream": true; Vertex's :streamRawPredict (with "stream": true) Anthropic's; Bedrock's
invoke-with-response-stream AWS event stream frames of base64 Messages API events, converse-stream
frames of ConverseStream's events. Keys for it: stream (false: answer plain JSON even to a
streaming request), delay (seconds between events), wait (a file: the 2nd answer pauses after its
first event until it exists), fault (the 1st request only, not counted as a turn: "stall" headers
then nothing; "badcrc" a frame whose CRC is wrong; "oversize" a frame saying 1 GiB; "exception:TYPE"
an exception frame (Bedrock) or error event (Vertex: TYPE is Anthropic's error type; Azure: an
error chunk) after the first event); ctype (the Content-Type a stream is sent with, as a proxy
might change it).
Other keys: key, bearer (azure: expect Authorization: Bearer KEY instead of api-key), deployment,
api_version, access, secret, token, region, project, model, headers {name: value} and query
{name: value} that every request must carry.

Each request is answered in its API's shape: turn 1 calls list_dir {"path": "."}, turn 2 calls
final_result {"verdict": "ok"}. The Responses API's item rules are checked as the API does for
store: false: store is false and include asks for reasoning.encrypted_content; every function_call
has its function_call_output (same call_id) before the next message; the reasoning item of turn 1
comes back with its encrypted content, before its function call. A broken rule gets a 400 in the
API's own shape. Every request is logged as one JSON line {path, query, headers, body, problems}."""
import base64, datetime, hashlib, hmac, json, os, struct, sys, threading, time, zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, parse_qsl, quote, unquote

C = json.load(open(sys.argv[1]))
# Request bodies are validated against OpenAI's own OpenAPI document where the API is OpenAI's: the
# schemas reachable from the request body, kept unchanged in tests/fixtures (source and commit
# named inside). Needs python3-jsonschema; without it each log line says "schema": null.
FIXTURE = {"responses": "openai-responses-request.schema.json", "azure-responses": "openai-responses-request.schema.json",
           "azure-chat": "openai-chat-request.schema.json"}.get(C["mode"])
VALIDATOR = None
if FIXTURE:
    try:
        import jsonschema, os.path
        VALIDATOR = jsonschema.Draft202012Validator(json.load(open(os.path.join(
            os.path.dirname(os.path.abspath(__file__)), "fixtures", FIXTURE))))
    except ImportError:
        pass
PORTFILE, LOGFILE = sys.argv[2], sys.argv[3]
MODE = C["mode"]
LOCK = threading.Lock()
TURN = {"n": 0}


def sigv4_problems(method, rawpath, query, headers, body):
    """Recompute an AWS Signature Version 4 (the documented algorithm, not curl's code)."""
    auth = headers.get("authorization", "")
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        return ["no AWS4-HMAC-SHA256 Authorization header"]
    parts = dict(p.strip().split("=", 1) for p in auth[len("AWS4-HMAC-SHA256 "):].split(","))
    cred = parts.get("Credential", "").split("/")
    if len(cred) != 5:
        return ["bad Credential %r" % parts.get("Credential")]
    access, date, region, service, term = cred
    probs = []
    if access != C["access"]:
        probs.append("access key id %s" % access)
    if region != C["region"] or service != "bedrock" or term != "aws4_request":
        probs.append("credential scope %s/%s/%s" % (region, service, term))
    amzdate = headers.get("x-amz-date", "")
    try:
        t = datetime.datetime.strptime(amzdate, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
        if abs((datetime.datetime.now(datetime.timezone.utc) - t).total_seconds()) > 900:
            probs.append("x-amz-date %s is more than 15 minutes off" % amzdate)
        if amzdate[:8] != date:
            probs.append("x-amz-date and the credential's date differ")
    except ValueError:
        probs.append("bad x-amz-date %r" % amzdate)
    signed = parts.get("SignedHeaders", "").split(";")
    for must in ("host", "x-amz-date") + (("x-amz-security-token",) if C.get("token") else ()):
        if must not in signed:
            probs.append("%s is not signed" % must)
    if C.get("token") and headers.get("x-amz-security-token") != C["token"]:
        probs.append("x-amz-security-token missing or wrong")
    # Canonical request: non-S3 services URI-encode each path segment twice (from the raw path).
    enc = lambda s: quote(s, safe="-_.~")
    canon_uri = "/".join(enc(enc(unquote(seg))) for seg in rawpath.split("/"))
    canon_query = "&".join("%s=%s" % (enc(k), enc(v)) for k, v in sorted(query))
    canon_headers = "".join("%s:%s\n" % (h, " ".join(headers.get(h, "").split())) for h in signed)
    payload = hashlib.sha256(body).hexdigest()
    if headers.get("x-amz-content-sha256") not in (None, payload):
        probs.append("x-amz-content-sha256 does not match the body")
    k = ("AWS4" + C["secret"]).encode()
    for m in (date, region, service, "aws4_request"):
        k = hmac.new(k, m.encode(), hashlib.sha256).digest()

    def sign(uri):
        creq = "\n".join([method, uri, canon_query, canon_headers, ";".join(signed), payload])
        sts = "\n".join(["AWS4-HMAC-SHA256", amzdate, "/".join(cred[1:]), hashlib.sha256(creq.encode()).hexdigest()])
        return creq, hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    creq, want = sign(canon_uri)
    if parts.get("Signature") != want:
        once = "/".join(enc(unquote(seg)) for seg in rawpath.split("/"))
        hint = " (it matches the path encoded once)" if sign(once)[1] == parts.get("Signature") else ""
        probs.append("SigV4 signature mismatch%s (canonical request %r)" % (hint, creq))
    return probs


def responses_problems(b):
    probs = []
    if b.get("store") is not False:
        probs.append("store is not false")
    if "reasoning.encrypted_content" not in (b.get("include") or []):
        probs.append("include lacks reasoning.encrypted_content")
    for t in b.get("tools") or []:
        if t.get("type") != "function" or "name" not in t or "function" in t:
            probs.append("tool %r is not {type: function, name, ...}" % t.get("name"))
    items = b.get("input")
    if not isinstance(items, list):
        return probs + ["input is not a list of items"]
    pending = []
    seen_reasoning = False
    for i, it in enumerate(items):
        ty = it.get("type", "message" if "role" in it else None)
        if ty == "reasoning":
            seen_reasoning = True
            if not it.get("encrypted_content"):
                probs.append("input[%d]: a reasoning item without its encrypted_content" % i)
        elif ty == "function_call":
            if not it.get("call_id") or not isinstance(it.get("arguments"), str):
                probs.append("input[%d]: function_call without call_id or string arguments" % i)
            pending.append(it.get("call_id"))
        elif ty == "function_call_output":
            if it.get("call_id") not in pending:
                probs.append("input[%d]: No tool call found for function call output with call_id %s"
                             % (i, it.get("call_id")))
            else:
                pending.remove(it.get("call_id"))
        elif ty == "message":
            if pending:
                probs.append("input[%d]: a message before the output of call(s) %s" % (i, pending))
        else:
            probs.append("input[%d]: unknown item type %r" % (i, ty))
    if pending:
        probs.append("No tool output found for function call(s) %s" % pending)
    if TURN["n"] >= 1 and not seen_reasoning:
        probs.append("the reasoning item of the previous turn was not sent back (store: false)")
    if TURN["n"] >= 1:
        kinds = [it.get("type") for it in items if it.get("type") in ("reasoning", "function_call")]
        if kinds[:2] != ["reasoning", "function_call"]:
            probs.append("the reasoning item does not come before its function call: %s" % kinds)
    return probs


def anthropic_problems(b, version):
    probs = []
    if b.get("anthropic_version") != version:
        probs.append("anthropic_version is %r, not %s" % (b.get("anthropic_version"), version))
    if "model" in b:
        probs.append("model must not be in the body (it is in the path)")
    if not isinstance(b.get("max_tokens"), int):
        probs.append("max_tokens required")
    return probs


def converse_problems(b):
    probs = []
    for k in ("model", "anthropic_version", "max_tokens"):
        if k in b:
            probs.append("%s is no Converse field" % k)
    if not isinstance((b.get("inferenceConfig") or {}).get("maxTokens"), int):
        probs.append("inferenceConfig.maxTokens missing")
    for t in (b.get("toolConfig") or {}).get("tools") or []:
        spec = t.get("toolSpec") or {}
        if not spec.get("name") or not isinstance((spec.get("inputSchema") or {}).get("json"), dict):
            probs.append("a tool without toolSpec.name and inputSchema.json")
    msgs = b.get("messages") or []
    want, pending = "user", []
    for i, m in enumerate(msgs):
        if m.get("role") != want:
            probs.append("messages[%d]: role %s where %s must come" % (i, m.get("role"), want))
        blocks = m.get("content") or []
        if not blocks:
            probs.append("messages[%d]: no content" % i)
        got = [bl["toolResult"]["toolUseId"] for bl in blocks if "toolResult" in bl]
        if pending and sorted(got) != sorted(pending):
            probs.append("messages[%d]: toolResult ids %s do not answer the toolUse ids %s" % (i, got, pending))
        for bl in blocks:
            if "text" in bl and not bl["text"].strip():
                probs.append("messages[%d]: a blank text block" % i)
        pending = [bl["toolUse"]["toolUseId"] for bl in blocks if "toolUse" in bl]
        want = "assistant" if want == "user" else "user"
    if msgs and msgs[-1].get("role") != "user":
        probs.append("the last message is not the user's")
    return probs


def reply(turn):
    call = ("list_dir", {"path": "."}) if turn == 0 else ("final_result", {"verdict": "ok"})
    if MODE in ("responses", "azure-responses"):
        out = []
        if turn == 0:
            out.append({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc-secret-1"})
        out.append({"type": "function_call", "id": "fc_%d" % turn, "call_id": "call_%d" % turn, "name": call[0],
                    "arguments": json.dumps(call[1]), "status": "completed"})
        return {"id": "resp_%d" % turn, "object": "response", "status": "completed", "output": out,
                "usage": {"input_tokens": 120, "input_tokens_details": {"cached_tokens": 100},
                          "output_tokens": 50, "output_tokens_details": {"reasoning_tokens": 30},
                          "total_tokens": 170}}
    if MODE == "azure-chat":
        return {"id": "chatcmpl-%d" % turn, "object": "chat.completion", "model": "x",
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": None, "tool_calls": [{"id": "call_%d" % turn, "type": "function",
                    "function": {"name": call[0], "arguments": json.dumps(call[1])}}]}}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}
    if MODE == "bedrock-converse":
        return {"output": {"message": {"role": "assistant", "content": [
                    {"text": "Looking."}, {"toolUse": {"toolUseId": "tooluse_%d" % turn, "name": call[0],
                                                       "input": call[1]}}]}},
                "stopReason": "tool_use", "usage": {"inputTokens": 90, "outputTokens": 12, "totalTokens": 102,
                                                     "cacheReadInputTokens": 10}, "metrics": {"latencyMs": 5}}
    return {"id": "msg_%d" % turn, "type": "message", "role": "assistant", "model": "x", "stop_reason": "tool_use",
            "content": [{"type": "tool_use", "id": "toolu_%d" % turn, "name": call[0], "input": call[1]}],
            "usage": {"input_tokens": 100, "output_tokens": 10}}


def evframe(headers, payload):
    """One AWS event stream frame: prelude (lengths, CRC32), string headers, payload, CRC32."""
    hb = b"".join(bytes([len(k)]) + k.encode() + b"\x07" + struct.pack(">H", len(v)) + v.encode() for k, v in headers)
    prelude = struct.pack(">II", 16 + len(hb) + len(payload), len(hb))
    msg = prelude + struct.pack(">I", zlib.crc32(prelude)) + hb + payload
    return msg + struct.pack(">I", zlib.crc32(msg))


def evevent(t, obj):
    return evframe([(":message-type", "event"), (":event-type", t), (":content-type", "application/json")],
                   json.dumps(obj).encode())


def sse(name, obj):
    return (("event: %s\n" % name) if name else "") + "data: %s\n\n" % (obj if isinstance(obj, str) else json.dumps(obj))


def anthropic_events(msg):
    """The Messages API's stream events of a message."""
    head = dict(msg, content=[], stop_reason=None, usage=dict(msg["usage"], output_tokens=1))
    ev = [("message_start", {"type": "message_start", "message": head}), ("ping", {"type": "ping"})]
    for i, b in enumerate(msg["content"]):
        if b["type"] == "text":
            ev.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}))
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": b["text"]}}))
        else:
            ev.append(("content_block_start", {"type": "content_block_start", "index": i,
                       "content_block": dict(b, input={})}))
            a = json.dumps(b["input"])
            for piece in (a[: len(a) // 2], a[len(a) // 2:]):
                ev.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                           "delta": {"type": "input_json_delta", "partial_json": piece}}))
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    ev.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
               "usage": {"output_tokens": msg["usage"]["output_tokens"]}}))
    ev.append(("message_stop", {"type": "message_stop"}))
    return ev


def streamed(out):
    """The answer out as the service streams it: (content type, [bytes of each event])."""
    if MODE == "azure-chat":
        base = {"id": out["id"], "object": "chat.completion.chunk", "created": 1, "model": "x"}
        m = out["choices"][0]["message"]
        ev = [dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])]
        for i, tc in enumerate(m.get("tool_calls") or []):
            a = tc["function"]["arguments"]
            ev.append(dict(base, choices=[{"index": 0, "delta": {"tool_calls": [{"index": i, "id": tc["id"], "type": "function",
                      "function": {"name": tc["function"]["name"], "arguments": a[: len(a) // 2]}}]}, "finish_reason": None}]))
            ev.append(dict(base, choices=[{"index": 0, "delta": {"tool_calls": [{"index": i, "function": {"arguments": a[len(a) // 2:]}}]},
                      "finish_reason": None}]))
        ev.append(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": out["choices"][0]["finish_reason"]}]))
        ev.append(dict(base, choices=[], usage=out["usage"]))
        return "text/event-stream", [sse(None, e).encode() for e in ev] + [sse(None, "[DONE]").encode()]
    if MODE in ("responses", "azure-responses"):
        return "text/event-stream", [sse("response.created", {"type": "response.created", "response": dict(out, status="in_progress", output=[])}).encode(),
                                     sse("response.completed", {"type": "response.completed", "response": out}).encode()]
    if MODE == "vertex":
        return "text/event-stream", [sse(n, e).encode() for n, e in anthropic_events(out)]
    if MODE == "bedrock":
        return "application/vnd.amazon.eventstream", [evevent("chunk", {"bytes": base64.b64encode(json.dumps(e).encode()).decode(),
                                                                        "p": "abcdefghij"}) for _, e in anthropic_events(out)]
    m = out["output"]["message"]
    ev = [evevent("messageStart", {"role": "assistant", "p": "abc"})]
    for i, b in enumerate(m["content"]):
        if "text" in b:
            ev.append(evevent("contentBlockDelta", {"contentBlockIndex": i, "delta": {"text": b["text"]}, "p": "ab"}))
        else:
            tu = b["toolUse"]
            ev.append(evevent("contentBlockStart", {"contentBlockIndex": i, "start": {"toolUse": {"toolUseId": tu["toolUseId"], "name": tu["name"]}}}))
            a = json.dumps(tu["input"])
            for piece in (a[: len(a) // 2], a[len(a) // 2:]):
                ev.append(evevent("contentBlockDelta", {"contentBlockIndex": i, "delta": {"toolUse": {"input": piece}}}))
        ev.append(evevent("contentBlockStop", {"contentBlockIndex": i}))
    ev.append(evevent("messageStop", {"stopReason": out["stopReason"]}))
    ev.append(evevent("metadata", {"usage": out["usage"], "metrics": out["metrics"]}))
    return "application/vnd.amazon.eventstream", ev


def faulty(fault, ctype, events):
    """The events of a stream with the fault put in after the first."""
    if fault.startswith("exception:"):
        t = fault.split(":", 1)[1]
        if MODE in ("bedrock", "bedrock-converse"):
            bad = evframe([(":message-type", "exception"), (":exception-type", t), (":content-type", "application/json")],
                          json.dumps({"message": "the service says %s" % t}).encode())
        elif MODE == "vertex":
            bad = sse("error", {"type": "error", "error": {"type": t, "message": "the service says %s" % t}}).encode()
        elif MODE == "azure-responses":
            bad = sse("error", {"type": "error", "code": t, "message": "the service says %s" % t, "param": None}).encode()
        else:
            bad = sse(None, {"error": {"message": "the service says %s" % t, "type": t, "code": t}}).encode()
        return events[:1] + [bad]
    if fault == "badcrc":
        f = bytearray(events[1])
        f[-5] ^= 0x20
        return events[:1] + [bytes(f)]
    if fault == "oversize":
        prelude = struct.pack(">II", 1 << 30, 0)
        return events[:1] + [prelude + struct.pack(">I", zlib.crc32(prelude)) + b"\0" * 64]
    return events


REQS = {"n": 0}


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def stream(self, ctype, events, wait):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.end_headers()
        for i, ev in enumerate(events):
            if i and C.get("delay"):
                time.sleep(C["delay"])
            if i == 1 and wait:
                while not os.path.exists(wait):
                    time.sleep(0.05)
            self.wfile.write(ev)
            self.wfile.flush()

    def do_POST(self):
        n = int(self.headers.get("content-length", "0"))
        raw = self.rfile.read(n)
        u = urlsplit(self.path)
        query = parse_qsl(u.query, keep_blank_values=True)
        hdrs = {k.lower(): v for k, v in self.headers.items()}
        probs = []
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
            probs.append("body is not JSON")
        for k, v in (C.get("headers") or {}).items():
            if hdrs.get(k.lower()) != v:
                probs.append("header %s is %r, not %r" % (k, hdrs.get(k.lower()), v))
        for k, v in (C.get("query") or {}).items():
            if (k, v) not in query:
                probs.append("query %s=%s missing" % (k, v))
        path = u.path
        if MODE == "responses":
            if path != "/v1/responses":
                probs.append("path %s" % path)
            if hdrs.get("authorization") != "Bearer " + C["key"]:
                probs.append("Authorization is not Bearer KEY")
        elif MODE.startswith("azure"):
            want = ("/openai/responses" if MODE == "azure-responses"
                    else "/openai/deployments/%s/chat/completions" % C["deployment"])
            if path != want:
                probs.append("path %s, not %s" % (path, want))
            if ("api-version", C["api_version"]) not in query:
                probs.append("api-version=%s missing from the query" % C["api_version"])
            if C.get("bearer"):
                if hdrs.get("authorization") != "Bearer " + C["key"]:
                    probs.append("Authorization is not Bearer TOKEN (Entra ID)")
            elif hdrs.get("api-key") != C["key"] or "authorization" in hdrs:
                probs.append("api-key header missing or wrong, or an Authorization header sent")
            if MODE == "azure-responses" and body and body.get("model") != C["deployment"]:
                probs.append("model is %r, not the deployment" % body.get("model"))
            if MODE == "azure-chat" and body and "max_tokens" in body:
                probs.append("max_tokens (Azure's reasoning deployments want max_completion_tokens)")
        elif MODE in ("bedrock", "bedrock-converse"):
            want = "/model/%s/%s" % (C["model"], "converse" if MODE == "bedrock-converse" else "invoke")
            if unquote(path) == want + ("-stream" if MODE == "bedrock-converse" else "-with-response-stream"):
                want = unquote(path)
            if unquote(path) != want:
                probs.append("path %s, not %s" % (path, want))
            probs += sigv4_problems("POST", path, query, hdrs, raw)
            if "x-api-key" in hdrs or "anthropic-version" in hdrs:
                probs.append("Anthropic's own headers sent to Bedrock")
        elif MODE == "vertex":
            want = "/v1/projects/%s/locations/%s/publishers/anthropic/models/%s:%s" % (
                C["project"], C["region"], C["model"], "streamRawPredict" if path.endswith(":streamRawPredict") else "rawPredict")
            if path.endswith(":streamRawPredict") and not (body or {}).get("stream"):
                probs.append(":streamRawPredict without stream: true")
            if unquote(path) != want:
                probs.append("path %s, not %s" % (path, want))
            if hdrs.get("authorization") != "Bearer " + C["key"]:
                probs.append("Authorization is not Bearer TOKEN")
            if "x-api-key" in hdrs:
                probs.append("x-api-key sent to Vertex")
        schema = None
        if body is not None and VALIDATOR:
            errs = [e for e in VALIDATOR.iter_errors(body)]
            schema = FIXTURE
            for e in errs[:5]:
                sub = "; ".join(c.message[:120] for c in (e.context or [])[:3])
                probs.append("OpenAPI %s: %s at /%s%s" % (FIXTURE, e.message[:200], "/".join(map(str, e.absolute_path)),
                                                       " (%s)" % sub if sub else ""))
        if body is not None:
            if MODE in ("responses", "azure-responses"):
                probs += responses_problems(body)
            elif MODE == "bedrock":
                probs += anthropic_problems(body, "bedrock-2023-05-31")
            elif MODE == "bedrock-converse":
                probs += converse_problems(body)
            elif MODE == "vertex":
                probs += anthropic_problems(body, "vertex-2023-10-16")
        asked = path.endswith("-stream") or path.endswith(":streamRawPredict") or bool((body or {}).get("stream"))
        with LOCK:
            first = REQS["n"] == 0
            REQS["n"] += 1
            fault = C.get("fault") if first and not probs else None
            turn = TURN["n"]
            with open(LOGFILE, "a") as f:
                f.write(json.dumps({"path": self.path, "query": query, "headers": hdrs, "stream": asked, "fault": fault,
                                    "time": time.time(), "body": body, "schema": schema, "problems": probs}) + "\n")
            if not probs and not fault:
                TURN["n"] += 1
        if not probs and asked and C.get("stream", True):
            ctype, events = streamed(reply(turn))
            if fault == "stall":
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.end_headers()
                self.wfile.flush()
                try:
                    self.connection.settimeout(60)
                    while self.connection.recv(1024):
                        pass
                except OSError:
                    pass
                return
            if fault:
                events = faulty(fault, ctype, events)
            return self.stream(C.get("ctype", ctype), events, C.get("wait") if turn == 1 else None)
        if probs:
            if MODE in ("bedrock", "bedrock-converse"):
                out = {"message": "; ".join(probs)}
                status = 403 if any("SigV4" in p or "signed" in p for p in probs) else 400
            elif MODE == "vertex":
                out = {"error": {"code": 400, "message": "; ".join(probs), "status": "INVALID_ARGUMENT"}}
                status = 401 if any("Bearer" in p for p in probs) else 400
            else:
                out = {"error": {"message": "; ".join(probs), "type": "invalid_request_error", "param": None,
                                 "code": None}}
                status = 401 if any("api-key" in p or "Authorization" in p for p in probs) else 400
        else:
            out, status = reply(turn), 200
        data = json.dumps(out).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status != 200:
            self.send_header("x-should-retry", "false")
        self.end_headers()
        self.wfile.write(data)


srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
