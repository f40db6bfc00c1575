#!/usr/bin/env python3
"""A loopback OpenAI-compatible model for bench/fanout.sh: every request takes DELAY seconds, like
a real model's turn; a conversation with k assistant turns so far gets shell step k+1 until STEPS
steps were asked for, then final_result. Each conversation counts on its own, so any number of
jobs can talk to it at once.

usage: fanmodel.py PORTFILE STEPS DELAY"""
import json, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

portfile, steps, delay = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        turn = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        time.sleep(delay)
        if turn < steps:
            cmd = f"echo step {turn + 1} >> log; seq 2000 > f{turn}; ls -l > listing"
            call = {"id": f"c{turn}", "type": "function",
                    "function": {"name": "shell", "arguments": json.dumps({"command": cmd})}}
            msg, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
        else:
            call = {"id": f"c{turn}", "type": "function",
                    "function": {"name": "final_result", "arguments": json.dumps({"steps": turn})}}
            msg, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
        out = json.dumps({"id": f"x{turn}", "object": "chat.completion", "model": "fan",
                          "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                          "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


s = ThreadingHTTPServer(("127.0.0.1", 0), H)
s.daemon_threads = True
with open(portfile + ".tmp", "w") as f:
    f.write(str(s.server_address[1]))
import os
os.rename(portfile + ".tmp", portfile)
s.serve_forever()
