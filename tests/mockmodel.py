#!/usr/bin/env python3
"""A loopback mock model server for tests: speaks OpenAI chat completions and Anthropic
messages well enough to be scripted per test, checks every request body against what the public
API references require, and records every request it gets.

usage: mockmodel.py SCRIPT.json PORTFILE LOGFILE

SCRIPT is a JSON list served in order, one entry per request (the last one repeats):
  {"status": 200, "body": {...}, "headers": {"retry-after": "1"}, "delay": 0.5,
   "fault": "reset" | "truncate" | "malformed", "hold": 3}
("hold": N keeps the answer until N requests have arrived in all, or 30 s have passed.)
SCRIPT may instead be {"by_turn": [...]}: the server is stateless, as the real APIs are: each
request is answered with the entry whose index is the number of assistant messages in its own
conversation (the last one repeats), and the call ids come from that index, not from a count.
Shorthands: {"openai_text": "..."}, {"openai_calls": [[name, {args}], ...]},
            {"anthropic_text": "..."}, {"anthropic_calls": [[name, {args}], ...]},
  with optional "finish" (OpenAI finish_reason), "stop_reason" (Anthropic), "refusal" (OpenAI
  message.refusal) and "usage": [input, output, cached] (normalised: input includes cached);
            {"error": 401, "message": "..."}: an error in the API's own shape (the path decides:
  /v1/messages is Anthropic's {"type":"error","error":{type,message}}, else OpenAI's
  {"error":{message,type,code}}); "headers" and "delay" apply too.
A request that breaks the API's rules gets a 400 in the API's shape, as the real one would, and
is logged with its "problems"; "validate": false on an entry skips the check for that request.

Each request is appended to LOGFILE as one JSON line
  {"n", "path", "headers", "body", "time", "inflight", "problems"}   (time: seconds since the
  epoch; inflight: the requests being answered then, this one included)
The chosen port is written to PORTFILE once the server listens. A POST to /__reset reads SCRIPT
again and starts it over (a test that runs many scripts need not start a server for each); it is
not logged."""
import json, os, socket, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

script = json.load(open(sys.argv[1]))
portfile, logfile = sys.argv[2], sys.argv[3]
served = 0
inflight = 0
lock = threading.Lock()
arrived = threading.Condition(lock)

ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 408: "timeout_error", 409: "conflict_error", 413: "request_too_large",
               422: "invalid_request_error", 429: "rate_limit_error", 500: "api_error", 502: "api_error",
               503: "api_error", 529: "overloaded_error"}


def anthropic_path(path):
    return path.rstrip("/").endswith("/messages")


def errbody(path, status, message):
    kind = ERROR_TYPES.get(status, "api_error")
    if anthropic_path(path):
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def expand(entry, n, path):
    if "openai_text" in entry or "openai_calls" in entry or "refusal" in entry:
        msg = {"role": "assistant", "content": entry.get("openai_text")}
        if "refusal" in entry:
            msg["refusal"] = entry["refusal"]
        if "openai_calls" in entry:
            msg["tool_calls"] = [{"id": f"call_{n}_{i}", "type": "function",
                                  "function": {"name": c[0], "arguments": c[1] if isinstance(c[1], str) else json.dumps(c[1])}}
                                 for i, c in enumerate(entry["openai_calls"])]
        finish = entry.get("finish", "tool_calls" if "openai_calls" in entry else "stop")
        inp, out, cached = entry.get("usage", [100, 10, 40])
        return dict(entry, status=200, body={"id": f"chatcmpl-{n}", "object": "chat.completion", "model": "mock",
                    "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                    "usage": {"prompt_tokens": inp, "completion_tokens": out, "total_tokens": inp + out,
                              "prompt_tokens_details": {"cached_tokens": cached},
                              "completion_tokens_details": {"reasoning_tokens": 3}}})
    if "anthropic_text" in entry or "anthropic_calls" in entry:
        content = []
        if entry.get("anthropic_text"):
            content.append({"type": "text", "text": entry["anthropic_text"]})
        for i, c in enumerate(entry.get("anthropic_calls", [])):
            content.append({"type": "tool_use", "id": f"toolu_{n}_{i}", "name": c[0], "input": c[1]})
        stop = entry.get("stop_reason", "tool_use" if entry.get("anthropic_calls") else "end_turn")
        inp, out, cached = entry.get("usage", [100, 10, 40])
        return dict(entry, status=200, body={"id": f"msg_{n}", "type": "message", "role": "assistant", "model": "mock",
                    "content": content, "stop_reason": stop, "stop_sequence": None,
                    "usage": {"input_tokens": inp - cached, "output_tokens": out, "cache_read_input_tokens": cached,
                              "cache_creation_input_tokens": 0}})
    if "error" in entry and isinstance(entry["error"], int):
        return dict(entry, status=entry["error"], body=errbody(path, entry["error"], entry.get("message", "mock error")))
    return entry


def check_openai(body, headers):
    """What the chat completions reference requires of a request."""
    p = []
    if not isinstance(body, dict):
        return ["body is not a JSON object"]
    if not isinstance(body.get("model"), str) or not body["model"]:
        p.append("model: required string")
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        return p + ["messages: required non-empty array"]
    pending = []  # tool_call ids still to be answered
    for i, m in enumerate(msgs):
        role = m.get("role") if isinstance(m, dict) else None
        if role not in ("system", "developer", "user", "assistant", "tool"):
            p.append(f"messages[{i}].role: invalid {role!r}")
            continue
        if pending and role != "tool":
            p.append(f"messages[{i}]: tool_call_ids {pending} have no tool message before this {role} message")
            pending = []
        if role == "tool":
            tid = m.get("tool_call_id")
            if not isinstance(tid, str):
                p.append(f"messages[{i}].tool_call_id: required on tool messages")
            elif tid not in pending:
                p.append(f"messages[{i}].tool_call_id {tid!r} answers no pending tool call")
            else:
                pending.remove(tid)
            if not isinstance(m.get("content"), (str, list)):
                p.append(f"messages[{i}].content: required on tool messages")
        elif role == "assistant":
            calls = m.get("tool_calls")
            if m.get("content") is None and not calls:
                p.append(f"messages[{i}]: assistant needs content or tool_calls")
            for k, c in enumerate(calls or []):
                fn = c.get("function") or {}
                if c.get("type") != "function" or not isinstance(c.get("id"), str):
                    p.append(f"messages[{i}].tool_calls[{k}]: needs id and type function")
                if not isinstance(fn.get("name"), str) or not isinstance(fn.get("arguments"), str):
                    p.append(f"messages[{i}].tool_calls[{k}].function: needs name and arguments as a string")
                pending.append(c.get("id"))
        elif not isinstance(m.get("content"), (str, list)):
            p.append(f"messages[{i}].content: required for {role}")
    if pending:
        p.append(f"tool_call_ids {pending} are never answered")
    for k, t in enumerate(body.get("tools") or []):
        fn = t.get("function") or {}
        if t.get("type") != "function" or not isinstance(fn.get("name"), str):
            p.append(f"tools[{k}]: needs type function and function.name")
        if "parameters" in fn and not isinstance(fn["parameters"], dict):
            p.append(f"tools[{k}].function.parameters: must be an object")
    for k in ("max_tokens", "max_completion_tokens"):
        if k in body and (not isinstance(body[k], int) or body[k] < 1):
            p.append(f"{k}: must be a positive integer")
    return p


def check_anthropic(body, headers):
    """What the Messages reference requires of a request."""
    p = []
    h = {k.lower(): v for k, v in headers.items()}
    if "anthropic-version" not in h:
        p.append("header anthropic-version: required")
    if "authorization" in h:
        p.append("header Authorization: Anthropic takes the key in x-api-key")
    if not isinstance(body, dict):
        return p + ["body is not a JSON object"]
    if not isinstance(body.get("model"), str) or not body["model"]:
        p.append("model: required string")
    if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
        p.append("max_tokens: required positive integer")
    if "system" in body and not isinstance(body["system"], (str, list)):
        p.append("system: must be a string or text blocks")
    if isinstance(body.get("temperature"), (int, float)) and not 0 <= body["temperature"] <= 1:
        p.append("temperature: must be within [0, 1]")
    th = body.get("thinking")
    if th is not None:
        if not isinstance(th, dict) or th.get("type") != "enabled" or not isinstance(th.get("budget_tokens"), int) \
                or th["budget_tokens"] < 1024:
            p.append("thinking: {type: enabled, budget_tokens >= 1024}")
        elif isinstance(body.get("max_tokens"), int) and th["budget_tokens"] >= body["max_tokens"]:
            p.append("max_tokens must be greater than thinking.budget_tokens")
        if "temperature" in body:
            p.append("temperature may not be set with thinking")
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        return p + ["messages: required non-empty array"]
    # With thinking on, the last assistant turn of a tool loop starts with its thinking block(s).
    last = [m for m in msgs if isinstance(m, dict) and m.get("role") == "assistant"][-1:]
    if th is not None and last and isinstance(last[0].get("content"), list) and \
            any(isinstance(b, dict) and b.get("type") == "tool_use" for b in last[0]["content"]) and \
            last[0]["content"][0].get("type") not in ("thinking", "redacted_thinking"):
        p.append("Expected `thinking` or `redacted_thinking`, but found `%s`. When `thinking` is enabled, a final "
                 "`assistant` message must start with a thinking block" % last[0]["content"][0].get("type"))
    prev = None
    for i, m in enumerate(msgs):
        role = m.get("role") if isinstance(m, dict) else None
        if role not in ("user", "assistant"):
            p.append(f"messages[{i}].role: must be user or assistant, not {role!r}")
            continue
        if i == 0 and role != "user":
            p.append("messages[0]: the first message must use the user role")
        if prev is not None and prev.get("role") == role:
            p.append(f"messages[{i}]: roles must alternate (two {role} messages in a row)")
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list) or not blocks:
            p.append(f"messages[{i}].content: must be a string or a non-empty array")
            blocks = []
        for k, b in enumerate(blocks):
            t = b.get("type")
            if t == "text" and (not isinstance(b.get("text"), str) or not b["text"].strip()):
                p.append(f"messages[{i}].content[{k}]: text content blocks must contain non-whitespace text")
            elif t == "tool_use":
                if role != "assistant":
                    p.append(f"messages[{i}].content[{k}]: tool_use only in assistant messages")
                if not isinstance(b.get("id"), str) or not isinstance(b.get("name"), str) or not isinstance(b.get("input"), dict):
                    p.append(f"messages[{i}].content[{k}]: tool_use needs id, name and an input object")
            elif t == "tool_result":
                if role != "user":
                    p.append(f"messages[{i}].content[{k}]: tool_result only in user messages")
                if not isinstance(b.get("tool_use_id"), str):
                    p.append(f"messages[{i}].content[{k}]: tool_result needs tool_use_id")
                if "is_error" in b and not isinstance(b["is_error"], bool):
                    p.append(f"messages[{i}].content[{k}]: is_error must be a boolean")
            elif t in ("thinking", "redacted_thinking"):
                if role != "assistant":
                    p.append(f"messages[{i}].content[{k}]: {t} only in assistant messages")
                if t == "thinking" and (not isinstance(b.get("thinking"), str) or not isinstance(b.get("signature"), str)):
                    p.append(f"messages[{i}].content[{k}]: thinking blocks need thinking and signature, unchanged")
                if t == "redacted_thinking" and not isinstance(b.get("data"), str):
                    p.append(f"messages[{i}].content[{k}]: redacted_thinking needs data, unchanged")
            elif t not in ("text", "image", "document"):
                p.append(f"messages[{i}].content[{k}]: unknown block type {t!r}")
        # every tool_use of the previous assistant message answered first in this one, in order
        uses = [b.get("id") for b in (prev or {}).get("content", []) if isinstance(b, dict) and b.get("type") == "tool_use"] \
            if prev is not None and isinstance(prev.get("content"), list) else []
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        lead = [b.get("tool_use_id") for b in blocks[:len(uses)] if b.get("type") == "tool_result"]
        if uses and lead != uses:
            p.append(f"messages[{i}]: tool_use ids {uses} were found without tool_result blocks immediately after "
                     f"(got {lead}); each tool_use block must have a corresponding tool_result block in the next message")
        extra = [r for r in results if r not in uses]
        if extra:
            p.append(f"messages[{i}]: unexpected tool_use_id {extra} in tool_result blocks")
        prev = m
    if prev is not None and prev.get("role") == "assistant" and any(
            isinstance(b, dict) and b.get("type") == "tool_use" for b in prev.get("content", []) or []):
        p.append("the last message holds tool_use blocks without results")
    for k, t in enumerate(body.get("tools") or []):
        if not isinstance(t.get("name"), str) or not isinstance(t.get("input_schema"), dict) \
                or t["input_schema"].get("type") != "object":
            p.append(f"tools[{k}]: needs name and input_schema of type object")
    return p


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        global inflight, script, served
        if self.path == "/__reset":
            with lock:
                script = json.load(open(sys.argv[1]))
                served = 0
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        with lock:
            inflight += 1
            self.seen = inflight  # in flight as this one arrived, read under the same lock
        try:
            self.answer()
        finally:
            with lock:
                inflight -= 1

    def answer(self):
        global served
        with lock:
            n = served
            served += 1
            arrived.notify_all()
        length = int(self.headers.get("Content-Length", 0))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        if isinstance(script, dict):  # stateless: the conversation says which turn this is
            msgs = body.get("messages") if isinstance(body, dict) else None
            n = sum(1 for m in msgs or [] if isinstance(m, dict) and m.get("role") == "assistant")
            entries = script["by_turn"]
        else:
            entries = script
        entry = expand(entries[min(n, len(entries) - 1)], n, self.path)
        problems = []
        if entry.get("validate", True):
            check = check_anthropic if anthropic_path(self.path) else check_openai
            problems = check(body, dict(self.headers))
        with lock, open(logfile, "a") as f:
            f.write(json.dumps({"n": n, "path": self.path, "headers": dict(self.headers), "body": body,
                                "time": time.time(), "inflight": self.seen, "problems": problems}) + "\n")
        if problems:
            entry = {"status": 400, "body": errbody(self.path, 400, "; ".join(problems))}
        if entry.get("hold"):
            with lock:
                arrived.wait_for(lambda: served >= entry["hold"], 30)
        if entry.get("delay"):
            time.sleep(entry["delay"])
        fault = entry.get("fault")
        try:
            if fault == "reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                self.connection.close()
                self.close_connection = True
                return
            data = json.dumps(entry.get("body", {})).encode()
            if fault == "malformed":
                data = b'{"choices": [ this is not json'
            status = entry.get("status", 200)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            for k, v in entry.get("headers", {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if fault == "truncate":
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                self.connection.close()
                self.close_connection = True
                return
            self.wfile.write(data)
        except OSError:
            self.close_connection = True  # the client gave up (a timeout test): nothing to answer


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that hung up is part of the tests, not an error to print


srv = Server(("127.0.0.1", 0), Handler)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
