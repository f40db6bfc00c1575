#!/usr/bin/env python3
"""A loopback model provider having a bad hour (tests/e2e/badhour.sh): OpenAI chat completions
(/chat/completions) and Anthropic messages (/messages), streamed as server-sent events, that
misbehaves the way real providers do before it answers well.

usage: badhour.py CONFIG.json PORTFILE LOGFILE

CONFIG: {"faults": [FAULT, ...], "repeat": false, "replies": {MARKER: [ENTRY, ...]}}
  faults   the first requests (all jobs together, in the order they arrive) get these, one each;
           "repeat": true serves them round and round for ever (a provider that never recovers)
  replies  a good answer is chosen by the first MARKER found in the request's text and by the
           number of assistant messages in its conversation (stateless, as the real APIs are):
           ENTRY is {"calls": [[NAME, {ARGS}], ...]} or {"text": "..."}
FAULT (with the answer the request would have had, where the fault needs one):
  {"status": 429, "retry_after": "1", "retry_after_ms": "300"}   an error in the API's shape
  {"error200": true}      HTTP 200 whose JSON body is an error
  {"context": true}       context_length_exceeded (OpenAI) / prompt is too long (Anthropic)
  {"reset": K}            the answer's first K events, then a TCP reset
  {"cut": K}              the answer's first K events, then a clean close: no [DONE], no message_stop
  {"keepalive": true}     headers, then only ": keep-alive" comments until the client hangs up
  {"slow": S}             the whole answer, a few bytes at a time over S seconds
  {"pause": S}            headers, S seconds of silence, then the whole answer
  {"dup": true}           the whole answer with its first and last events each sent twice
  {"nousage": true}       the whole answer without any usage
  {"badcalls": true}      a tool call whose arguments are not JSON
  {"wait": "FILE"}        nothing at all (not even headers) until FILE exists, then the answer
  {"ok": true}            the answer, as it should be
Each request is logged as one JSON line {"n", "path", "marker", "turn", "fault", "stream", "time"}."""
import json, os, socket, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

config = json.load(open(sys.argv[1]))
portfile, logfile = sys.argv[2], sys.argv[3]
lock = threading.Lock()
state = {"n": 0}


def log(rec):
    with lock, open(logfile, "a") as f:
        f.write(json.dumps(rec) + "\n")


def answer_events(anthropic, body, entry, n, usage=True, badcalls=False):
    """The good answer as a list of (event name, data) pairs."""
    calls = entry.get("calls", [])
    text = entry.get("text")
    tokens, out = 1000, 20
    if anthropic:
        blocks = ([{"type": "text", "text": text}] if text else []) + \
                 [{"type": "tool_use", "id": "toolu_%d_%d" % (n, i), "name": c[0], "input": c[1]} for i, c in enumerate(calls)]
        stop = "tool_use" if calls else "end_turn"
        u0 = {"input_tokens": tokens, "output_tokens": 1} if usage else {}
        items = [("message_start", {"type": "message_start", "message": {"id": "msg_%d" % n, "type": "message",
                  "role": "assistant", "model": body.get("model"), "content": [], "stop_reason": None,
                  "stop_sequence": None, "usage": u0}})]
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                items.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}))
                items.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": b["text"]}}))
            else:
                items.append(("content_block_start", {"type": "content_block_start", "index": i,
                              "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}}))
                a = '{"command": "echo' if badcalls else json.dumps(b["input"])
                items.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                              "delta": {"type": "input_json_delta", "partial_json": a}}))
            items.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        md = {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}}
        if usage:
            md["usage"] = {"output_tokens": out}
        items.append(("message_delta", md))
        items.append(("message_stop", {"type": "message_stop"}))
        return items
    base = {"id": "c%d" % n, "object": "chat.completion.chunk", "created": 1, "model": body.get("model")}
    items = [(None, dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]))]
    if text:
        items.append((None, dict(base, choices=[{"index": 0, "delta": {"content": text}, "finish_reason": None}])))
    for i, c in enumerate(calls):
        a = '{"command": "echo' if badcalls else json.dumps(c[1])
        items.append((None, dict(base, choices=[{"index": 0, "delta": {"tool_calls": [{"index": i, "id": "call_%d_%d" % (n, i),
                      "type": "function", "function": {"name": c[0], "arguments": a}}]}, "finish_reason": None}])))
    items.append((None, dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "tool_calls" if calls else "stop"}])))
    if usage and (body.get("stream_options") or {}).get("include_usage"):
        items.append((None, dict(base, choices=[], usage={"prompt_tokens": tokens, "completion_tokens": out,
                                                          "total_tokens": tokens + out})))
    items.append((None, "[DONE]"))
    return items


def sse(name, data):
    return (("event: %s\n" % name if name else "") + "data: %s\n\n" % (data if isinstance(data, str) else json.dumps(data))).encode()


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, status, body, headers=None):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def head(self):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("content-length", "0")))
        body = json.loads(raw)
        anthropic = self.path.rstrip("/").endswith("/messages")
        msgs = body.get("messages") or []
        turn = sum(1 for m in msgs if m.get("role") == "assistant")
        text = raw.decode("utf-8", "replace")
        marker = next((k for k in sorted(config["replies"]) if k in text), None)
        with lock:
            n = state["n"]
            state["n"] += 1
        faults = config.get("faults", [])
        fault = {"ok": True}
        if faults and (n < len(faults) or config.get("repeat")):
            fault = faults[n % len(faults)]
        log({"n": n, "path": self.path, "marker": marker, "turn": turn, "fault": fault, "stream": bool(body.get("stream")),
             "time": time.time()})
        script = config["replies"].get(marker) or [{"text": "no marker"}]
        entry = script[min(turn, len(script) - 1)]
        try:
            self.serve(anthropic, body, entry, n, fault)
        except OSError:
            self.close_connection = True

    def serve(self, anthropic, body, entry, n, f):
        while f.get("wait") and not os.path.exists(f["wait"]):
            time.sleep(0.05)
        if f.get("status"):
            h = {}
            if "retry_after" in f:
                h["retry-after"] = f["retry_after"]
            if "retry_after_ms" in f:
                h["retry-after-ms"] = f["retry_after_ms"]
            kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(f["status"], "api_error")
            msg = {"type": "error", "error": {"type": kind, "message": "bad hour %d" % f["status"]}} if anthropic else \
                  {"error": {"message": "bad hour %d" % f["status"], "type": kind, "code": None}}
            return self.send(f["status"], msg, h)
        if f.get("error200"):
            return self.send(200, {"error": {"message": "The server had an error processing your request.",
                                             "type": "server_error", "code": None}})
        if f.get("context"):
            if anthropic:
                return self.send(400, {"type": "error", "error": {"type": "invalid_request_error",
                                 "message": "prompt is too long: 300000 tokens > 200000 maximum"}})
            return self.send(400, {"error": {"message": "This model's maximum context length is 128000 tokens. However, "
                             "your messages resulted in 300000 tokens.", "type": "invalid_request_error",
                             "param": "messages", "code": "context_length_exceeded"}})
        items = answer_events(anthropic, body, entry, n, usage=not f.get("nousage"), badcalls=f.get("badcalls"))
        if f.get("dup"):
            items = [items[0]] + items + [items[-1]]
        self.head()
        if f.get("keepalive"):
            self.connection.settimeout(0.2)
            while True:
                self.wfile.write(b": keep-alive\n\n")
                self.wfile.flush()
                try:
                    if self.connection.recv(1) == b"":
                        return
                except socket.timeout:
                    pass
        if f.get("pause"):
            time.sleep(f["pause"])
        data = b"".join(sse(k, v) for k, v in items)
        if "reset" in f or "cut" in f:
            k = f.get("reset", f.get("cut"))
            self.wfile.write(b"".join(sse(a, b) for a, b in items[:k]))
            self.wfile.flush()
            if "reset" in f:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            self.connection.close()
            return
        if f.get("slow"):
            step = max(1, len(data) // 20)
            for i in range(0, len(data), step):
                self.wfile.write(data[i:i + step])
                self.wfile.flush()
                time.sleep(f["slow"] / 20)
            return
        self.wfile.write(data)
        self.wfile.flush()


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass


srv = Server(("127.0.0.1", 0), H)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
