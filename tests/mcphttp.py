#!/usr/bin/env python3
"""A minimal MCP server over Streamable HTTP (JSON answers only) for tests: one tool, echo.
Usage: mcphttp.py PORTFILE LOG  (listens on 127.0.0.1, an ephemeral port written to PORTFILE;
every request's method and path appended to LOG)."""
import json, os, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def reply(self, code, obj=None):
        body = json.dumps(obj).encode() if obj is not None else b""
        self.send_response(code)
        if obj is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Mcp-Session-Id", "s1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_DELETE(self):
        open(sys.argv[2], "a").write("DELETE %s\n" % self.path)
        self.reply(200)

    def do_GET(self):
        open(sys.argv[2], "a").write("GET %s\n" % self.path)
        self.reply(405)

    def do_POST(self):
        msg = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        open(sys.argv[2], "a").write("POST %s %s\n" % (self.path, msg.get("method")))
        if "id" not in msg:
            return self.reply(202)
        m, r = msg.get("method"), None
        if m == "initialize":
            r = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                 "serverInfo": {"name": "mcphttp", "version": "1"}}
        elif m == "tools/list":
            r = {"tools": [{"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]}
        elif m == "tools/call":
            r = {"content": [{"type": "text", "text": "echo: " + json.dumps(msg["params"].get("arguments"))}]}
        if r is None:
            return self.reply(200, {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}})
        self.reply(200, {"jsonrpc": "2.0", "id": msg["id"], "result": r})


s = ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()
