#!/usr/bin/env python3
"""Hostile peers for tests/e2e/attack-server.sh (loopback only).

  attackserver.py model MODE PORTFILE   an OpenAI-compatible model server
  attackserver.py mcp MODE PORTFILE     an MCP server over Streamable HTTP
  attackserver.py stdio MODE            an MCP server over stdio

model modes: drip (every request: a 200 event stream of comments, one a second, without end:
the idle watchdog is fed, no answer comes), storm (every request: 503 without end), controls
(every request: a reply whose text is 15 MiB of raw control bytes, which JSON forbids and cJSON
takes, each printed as six bytes), dupids (turn 1: two calls of mcp__s__echo, {"v": "one"} and
{"v": "two"}, both with the id c1; then final_result), underreport (every turn: a call of shell
`true`, reported as 1 input and 1 output token whatever the request's size).
stdio modes: echo (tools/call of echo answers "echo " and its arguments), mute (tools/call is never answered), relist (tools/call is answered with
notifications/tools/list_changed before it; every tools/list after the first is 100 pages, each
sent 1.5 s after it was asked for), slowlist (the same from the first tools/list on), forks MARK
(starts two children that leave its session and ignore SIGTERM, a python with MARK in its
command line and a double-forked one; ignores SIGTERM itself and never exits, not even when its
stdin closes)."""
import json, os, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Model(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        req = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        mode = sys.argv[2]
        if mode == "underreport":
            turn = sum(1 for m in json.loads(req)["messages"] if m["role"] == "assistant")
            msg = {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c%d" % turn, "type": "function", "function": {"name": "shell", "arguments": '{"command":"true"}'}}]}
            body = json.dumps({"id": "x", "object": "chat.completion", "choices": [
                {"index": 0, "finish_reason": "tool_calls", "message": msg}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if mode == "dupids":
            turn = sum(1 for m in json.loads(req)["messages"] if m["role"] == "assistant")
            calls = [("c1", "mcp__s__echo", {"v": v}) for v in ("one", "two")] if turn == 0 else [("c9", "final_result", {})]
            msg = {"role": "assistant", "content": None, "tool_calls": [
                {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}} for i, n, a in calls]}
            body = json.dumps({"id": "x", "object": "chat.completion", "choices": [
                {"index": 0, "finish_reason": "tool_calls", "message": msg}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 10}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
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
        if mode == "controls":
            body = (b'{"id":"x","object":"chat.completion","choices":[{"index":0,"finish_reason":"stop",'
                    b'"message":{"role":"assistant","content":"' + b"\x01" * (15 << 20) + b'"}}],'
                    b'"usage":{"prompt_tokens":10,"completion_tokens":10}}')
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
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


def init_result(msg):
    return {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "attack", "version": "1"}}


def forks(mark):
    import signal, subprocess
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    hold = "import time\nwhile True: time.sleep(1)"
    subprocess.Popen([sys.executable, "-c", hold, mark], start_new_session=True)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", hold, mark + ".2"])
        os._exit(0)


def stdio(mode):
    out = sys.stdout.buffer
    if mode == "forks":
        forks(sys.argv[3])
    lists = 0

    def send(obj):
        out.write(json.dumps(obj).encode() + b"\n")
        out.flush()

    for line in sys.stdin.buffer:
        msg = json.loads(line)
        m, rid = msg.get("method"), msg.get("id")
        if m == "initialize":
            send({"jsonrpc": "2.0", "id": rid, "result": init_result(msg)})
        elif m == "tools/list":
            page = int((msg.get("params") or {}).get("cursor", "0"))
            lists += page == 0
            first = "echo" if mode == "echo" else "t"
            res = {"tools": [{"name": first if page == 0 else "t%d" % page, "inputSchema": {"type": "object"}}]}
            if (mode == "relist" and lists > 1) or mode == "slowlist":
                time.sleep(1.5)
                if page < 99:
                    res["nextCursor"] = str(page + 1)
            send({"jsonrpc": "2.0", "id": rid, "result": res})
        elif m == "tools/call":
            if mode == "mute":
                continue
            if mode == "echo":
                text = "echo " + json.dumps(msg["params"]["arguments"], separators=(",", ":"))
                send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}})
                continue
            if mode == "relist":
                send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "ok"}]}})
    while mode == "forks":
        time.sleep(1)


if sys.argv[1] == "model":
    serve(Model)
elif sys.argv[1] == "stdio":
    stdio(sys.argv[2])
