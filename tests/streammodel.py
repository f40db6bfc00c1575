#!/usr/bin/env python3
"""A loopback model that streams: OpenAI chat completions (/chat/completions) and Anthropic
messages (/messages), as server-sent events when the request asks ("stream": true, and the
config's "stream" is not false), else as plain JSON. For the tests of live progress, streaming,
the stall watchdog, retries of an endpoint that is down, give-up detection and the provider's
window.

usage: streammodel.py CONFIG.json PORTFILE LOGFILE

CONFIG: {"down": S, "delay": S, "stream": true, "window": N, "script": [ENTRY, ...]}
  down    the port is bound at once (written to PORTFILE) but not listened on for S seconds:
          connections are refused, as from an endpoint that is down
  delay   seconds each answer takes (streamed: between its first and its last event)
  window  a request whose tokens (its body's bytes / 4) and output cap pass N is refused with the
          provider's context_length_exceeded error (OpenAI's or Anthropic's words); the script
          does not advance
  script  served in order, one entry per request that is answered (the last one repeats):
    {"calls": [[NAME, {ARGS}], ...]}   tool calls
    {"text": "..."}                    a reply without a tool call
    {"stall": true}                    headers (200, text/event-stream), then nothing until the
                                       client hangs up (a dead connection)
    {"status": 503}                    an error in the API's shape
    {"wait": "FILE"}                   (with another entry's keys) answered once FILE exists
Each request is logged as one JSON line {"n", "path", "stream", "bytes", "tokens", "time", "status"}."""
import json, math, os, socket, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

config = json.load(open(sys.argv[1]))
portfile, logfile = sys.argv[2], sys.argv[3]
lock = threading.Lock()
state = {"n": 0, "served": 0}


def log(rec):
    with lock, open(logfile, "a") as f:
        f.write(json.dumps(rec) + "\n")


def nodup(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("a key twice: %s" % sorted(k for k in keys if keys.count(k) > 1)[0])
    return dict(pairs)


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def events(self, items, delay):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        for i, (name, data) in enumerate(items):
            if i == 1 and delay:
                time.sleep(delay)
            text = ("event: %s\n" % name if name else "") + "data: %s\n\n" % (data if isinstance(data, str) else json.dumps(data))
            self.wfile.write(text.encode())
            self.wfile.flush()

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("content-length", "0")))
        try:  # a key twice is not JSON any API takes (a request spliced together wrongly)
            body = json.loads(raw, object_pairs_hook=nodup)
        except ValueError as e:
            return self.send(400, {"error": {"message": "bad request body: %s" % e, "type": "invalid_request_error"}})
        anthropic = self.path.rstrip("/").endswith("/messages")
        streaming = bool(body.get("stream")) and config.get("stream", True)
        tokens = math.ceil(len(raw) / 4)
        cap = body.get("max_completion_tokens", body.get("max_tokens")) or 0
        with lock:
            state["n"] += 1
            n = state["n"]
        rec = {"n": n, "path": self.path, "stream": bool(body.get("stream")), "bytes": len(raw), "tokens": tokens, "time": time.time()}
        window = config.get("window")
        if window and tokens + cap > window:
            rec["status"] = 400
            log(rec)
            if anthropic:
                return self.send(400, {"type": "error", "error": {"type": "invalid_request_error",
                                 "message": "prompt is too long: %d tokens > %d maximum" % (tokens + cap, window)}})
            return self.send(400, {"error": {"message": "This model's maximum context length is %d tokens. However, your "
                             "messages resulted in %d tokens. Please reduce the length of the messages." % (window, tokens + cap),
                             "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}})
        with lock:
            k = state["served"]
            state["served"] += 1
        script = config["script"]
        entry = script[min(k, len(script) - 1)]
        if entry.get("wait"):
            while not os.path.exists(entry["wait"]):
                time.sleep(0.05)
        rec["status"] = entry.get("status", 200)
        log(rec)
        if entry.get("stall"):
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            self.wfile.flush()
            try:  # nothing more, until the client gives up
                self.connection.settimeout(60)
                while self.connection.recv(1024):
                    pass
            except OSError:
                pass
            self.close_connection = True
            return
        if entry.get("status"):
            msg = {"type": "error", "error": {"type": "api_error", "message": "unavailable"}} if anthropic else \
                  {"error": {"message": "unavailable", "type": "server_error", "code": None}}
            return self.send(entry["status"], msg)
        delay = config.get("delay", 0)
        calls = entry.get("calls", [])
        text = entry.get("text")
        out = 7
        if anthropic:
            self.anthropic(body, text, calls, tokens, out, streaming, delay, n)
        else:
            self.openai(body, text, calls, tokens, out, streaming, delay, n)

    def openai(self, body, text, calls, tokens, out, streaming, delay, n):
        tcs = [{"id": "call_%d_%d" % (n, i), "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)}} for i, (name, args) in enumerate(calls)]
        finish = "tool_calls" if calls else "stop"
        usage = {"prompt_tokens": tokens, "completion_tokens": out, "total_tokens": tokens + out}
        if not streaming:
            if delay:
                time.sleep(delay)
            return self.send(200, {"id": "c%d" % n, "object": "chat.completion", "model": body.get("model"),
                                   "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "tool_calls": tcs or None},
                                                "finish_reason": finish}], "usage": usage})
        base = {"id": "c%d" % n, "object": "chat.completion.chunk", "created": 1, "model": body.get("model")}
        items = [(None, dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]))]
        for piece in ([text[: len(text) // 2], text[len(text) // 2:]] if text else []):
            items.append((None, dict(base, choices=[{"index": 0, "delta": {"content": piece}, "finish_reason": None}])))
        for i, tc in enumerate(tcs):
            a = tc["function"]["arguments"]
            items.append((None, dict(base, choices=[{"index": 0, "delta": {"tool_calls": [{"index": i, "id": tc["id"], "type": "function",
                          "function": {"name": tc["function"]["name"], "arguments": a[: len(a) // 2]}}]}, "finish_reason": None}])))
            items.append((None, dict(base, choices=[{"index": 0, "delta": {"tool_calls": [{"index": i, "function": {"arguments": a[len(a) // 2:]}}]},
                          "finish_reason": None}])))
        items.append((None, dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}])))
        if (body.get("stream_options") or {}).get("include_usage"):
            items.append((None, dict(base, choices=[], usage=usage)))
        items.append((None, "[DONE]"))
        self.events(items, delay)

    def anthropic(self, body, text, calls, tokens, out, streaming, delay, n):
        blocks = ([{"type": "text", "text": text}] if text else []) + \
                 [{"type": "tool_use", "id": "toolu_%d_%d" % (n, i), "name": name, "input": args} for i, (name, args) in enumerate(calls)]
        stop = "tool_use" if calls else "end_turn"
        if not streaming:
            if delay:
                time.sleep(delay)
            return self.send(200, {"id": "msg_%d" % n, "type": "message", "role": "assistant", "model": body.get("model"),
                                   "content": blocks, "stop_reason": stop, "stop_sequence": None,
                                   "usage": {"input_tokens": tokens, "output_tokens": out}})
        items = [("message_start", {"type": "message_start", "message": {"id": "msg_%d" % n, "type": "message", "role": "assistant",
                  "model": body.get("model"), "content": [], "stop_reason": None, "stop_sequence": None,
                  "usage": {"input_tokens": tokens, "output_tokens": 1}}}), ("ping", {"type": "ping"})]
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                items.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}))
                for piece in (b["text"][: len(b["text"]) // 2], b["text"][len(b["text"]) // 2:]):
                    items.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": piece}}))
            else:
                items.append(("content_block_start", {"type": "content_block_start", "index": i,
                              "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}}))
                a = json.dumps(b["input"])
                for piece in (a[: len(a) // 2], a[len(a) // 2:]):
                    items.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                  "delta": {"type": "input_json_delta", "partial_json": piece}}))
            items.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        items.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                      "usage": {"output_tokens": out}}))
        items.append(("message_stop", {"type": "message_stop"}))
        self.events(items, delay)


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass


srv = Server(("127.0.0.1", 0), H, bind_and_activate=False)
srv.socket.bind(("127.0.0.1", 0))  # the port is ours, but refuses connections until it listens
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.socket.getsockname()[1]))
os.rename(portfile + ".tmp", portfile)
if config.get("down"):
    time.sleep(config["down"])
    with open(portfile + ".up", "w") as f:
        f.write("up\n")
srv.server_activate()
srv.serve_forever()
