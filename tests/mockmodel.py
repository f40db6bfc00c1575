#!/usr/bin/env python3
"""A loopback mock model server for tests: speaks OpenAI chat completions and Anthropic
messages well enough to be scripted per test, and records every request it gets.

usage: mockmodel.py SCRIPT.json PORTFILE LOGFILE

SCRIPT is a JSON list served in order, one entry per request (the last one repeats):
  {"status": 200, "body": {...}, "headers": {"retry-after": "1"}, "delay": 0.5,
   "fault": "reset" | "truncate" | "malformed"}
Shorthands: {"openai_text": "..."}, {"openai_calls": [[name, {args}], ...]},
            {"anthropic_text": "..."}, {"anthropic_calls": [[name, {args}], ...]}.
Each request is appended to LOGFILE as one JSON line {"path", "headers", "body", "time"}.
The chosen port is written to PORTFILE once the server listens."""
import json, socket, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

script = json.load(open(sys.argv[1]))
portfile, logfile = sys.argv[2], sys.argv[3]
served = 0


def expand(entry, n):
    if "openai_text" in entry or "openai_calls" in entry:
        msg = {"role": "assistant", "content": entry.get("openai_text")}
        if "openai_calls" in entry:
            msg["tool_calls"] = [{"id": f"call_{n}_{i}", "type": "function",
                                  "function": {"name": c[0], "arguments": c[1] if isinstance(c[1], str) else json.dumps(c[1])}}
                                 for i, c in enumerate(entry["openai_calls"])]
        finish = entry.get("finish", "tool_calls" if "openai_calls" in entry else "stop")
        return {"status": 200, "body": {"id": f"chatcmpl-{n}", "object": "chat.completion", "model": "mock",
                "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110,
                          "prompt_tokens_details": {"cached_tokens": 40},
                          "completion_tokens_details": {"reasoning_tokens": 3}}}}
    if "anthropic_text" in entry or "anthropic_calls" in entry:
        content = []
        if entry.get("anthropic_text"):
            content.append({"type": "text", "text": entry["anthropic_text"]})
        for i, c in enumerate(entry.get("anthropic_calls", [])):
            content.append({"type": "tool_use", "id": f"toolu_{n}_{i}", "name": c[0], "input": c[1]})
        stop = entry.get("stop_reason", "tool_use" if entry.get("anthropic_calls") else "end_turn")
        return {"status": 200, "body": {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": "mock",
                "content": content, "stop_reason": stop,
                "usage": {"input_tokens": 60, "output_tokens": 10, "cache_read_input_tokens": 40,
                          "cache_creation_input_tokens": 0}}}
    return entry


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        global served
        n = served
        served += 1
        length = int(self.headers.get("Content-Length", 0))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        with open(logfile, "a") as f:
            f.write(json.dumps({"path": self.path, "headers": dict(self.headers), "body": body,
                                "time": time.time()}) + "\n")
        entry = expand(script[min(n, len(script) - 1)], n)
        if entry.get("delay"):
            time.sleep(entry["delay"])
        fault = entry.get("fault")
        if fault == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            self.connection.close()
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
            return
        self.wfile.write(data)


srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
