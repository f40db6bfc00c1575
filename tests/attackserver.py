#!/usr/bin/env python3
"""Hostile peers for tests/e2e/attack-server.sh (loopback only).

  attackserver.py model MODE PORTFILE   an OpenAI-compatible model server
  attackserver.py mcp MODE PORTFILE     an MCP server over Streamable HTTP
  attackserver.py stdio MODE            an MCP server over stdio

model modes: drip (every request: a 200 event stream of comments, one a second, without end:
the idle watchdog is fed, no answer comes), storm (every request: 503 without end)."""
import json, os, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Model(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        mode = sys.argv[2]
        if mode == "drip":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            try:
                while True:
                    self.wfile.write(b": still thinking\n\n")
                    self.wfile.flush()
                    time.sleep(1)
            except (BrokenPipeError, ConnectionResetError):
                return
        if mode == "storm":
            body = b'{"error":{"message":"overloaded","type":"server_error"}}'
            self.send_response(503)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)


def serve(handler):
    s = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    s.daemon_threads = True
    open(sys.argv[3] + ".tmp", "w").write(str(s.server_address[1]))
    os.rename(sys.argv[3] + ".tmp", sys.argv[3])
    s.serve_forever()


if sys.argv[1] == "model":
    serve(Model)
