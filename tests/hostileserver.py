#!/usr/bin/env python3
"""Hostile peers for tests/e2e/hostilebytes.sh and bench/hostilebytes.sh (loopback only).

  hostileserver.py http MODE PORTFILE   an MCP server over Streamable HTTP, or a model server
  hostileserver.py stdio MODE           an MCP server over stdio

HTTP modes: ping (tools/call and every answer of the client's get a server-to-client ping
back, never the result), sse (tools/call: an event stream of pings and notifications without
end), big (tools/call: one 63 MiB JSON body), model (every POST: a 63 MiB JSON body).
stdio modes: flood (tools/call: pings and notifications without end, stdin never read again),
bigline (tools/call: one 63 MiB line), deep (tools/call: 100000 nested arrays), schemawork
(a small outputSchema of two recursive anyOf branches and a structuredContent 60 levels deep
that fails both at the bottom: 2^60 applications without a bound on the validation's work),
regexbomb (an outputSchema whose pattern, 36 bytes, makes regcomp copy its atom 60^4 times).
Paginated tool lists (both transports, modes of tools/list; every page under the 16 MiB message
cap): pages (24 pages, each a tool with a 15 MiB description), pagesmid (40 pages, each a tool
with a 200 KiB description), manytools (20 pages of 100 small tools), bigschema (a tool whose
inputSchema holds 200000 values in 400 KiB of text), fine (3 pages of 300 small tools: kept)."""
import json, os, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BIG = 63 << 20


def bigjson(rid):
    """A JSON-RPC answer of 63 MiB whose tree would be huge: an array of zeros."""
    head = b'{"jsonrpc":"2.0","id":%d,"result":{"content":[],"x":[' % rid
    n = (BIG - len(head) - 4) // 2
    return head + b"0," * n + b"0]}}"


def init_result(msg):
    return {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "1"}}


TOOLS = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
LISTS = {"pages": (24, 1, 15 << 20), "pagesmid": (40, 1, 200 << 10), "manytools": (20, 100, 10),
         "fine": (3, 300, 100)}


NODE = {"anyOf": [{"type": "object", "properties": {"op": {"const": op}, "args": {"type": "array",
                   "items": {"$ref": "#/$defs/node"}}}, "required": ["op", "args"]} for op in ("add", "neg")]
        + [{"type": "number"}]}
WORKSCHEMA = {"type": "object", "properties": {"e": {"$ref": "#/$defs/node"}}, "$defs": {"node": NODE}}


def deepnode(d):
    """A value d levels deep that every branch of NODE refuses only at its bottom."""
    v = "x"
    for _ in range(d):
        v = {"op": "mul", "args": [v]}
    return v


def toollist(mode, msg):
    """The page of tools/list the message asks for (its cursor: the page's number)."""
    if mode == "schemawork":
        return {"tools": [{"name": "t", "inputSchema": {"type": "object"}, "outputSchema": WORKSCHEMA}]}
    if mode == "regexbomb":
        bomb = {"type": "object", "properties": {"s": {"type": "string", "pattern": "(((a{1,60}){1,60}){1,60}){1,60}"}}}
        return {"tools": [{"name": "t", "inputSchema": {"type": "object"}, "outputSchema": bomb}]}
    if mode == "bigschema":
        return {"tools": [{"name": "t", "inputSchema": {"type": "object", "enum": [0] * 200000}}]}
    if mode not in LISTS:
        return TOOLS
    pages, per, dlen = LISTS[mode]
    page = int((msg.get("params") or {}).get("cursor", "0"))
    desc = "x" * dlen
    tools = [{"name": "t" if page == 0 and i == 0 else "t%d_%d" % (page, i), "description": desc,
              "inputSchema": {"type": "object"}} for i in range(per)]
    r = {"tools": tools}
    if page + 1 < pages:
        r["nextCursor"] = str(page + 1)
    return r


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, body, ctype="application/json"):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Mcp-Session-Id", "s1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_DELETE = do_GET

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        mode = sys.argv[2]
        if mode == "model":
            return self.send(b'{"id":"x","choices":[{"message":{"role":"assistant","content":"a"}}],"z":['
                             + b"0," * ((BIG - 80) // 2) + b"0]}")
        msg = json.loads(raw)
        m = msg.get("method")
        if m == "initialize":
            return self.send(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": init_result(msg)}).encode())
        if m == "tools/list":
            return self.send(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": toollist(mode, msg)}).encode())
        if m == "tools/call" or (m is None and mode == "ping"):
            if mode == "ping":
                self.server.n += 1
                return self.send(json.dumps({"jsonrpc": "2.0", "id": 1000 + self.server.n, "method": "ping"}).encode())
            if mode == "big":
                return self.send(bigjson(msg["id"]))
            if mode == "sse":
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                i = 0
                try:
                    while True:
                        i += 1
                        ev = {"jsonrpc": "2.0", "method": "notifications/progress",
                              "params": {"progressToken": msg["id"], "progress": i}}
                        if i % 2:
                            ev = {"jsonrpc": "2.0", "id": 5000 + i, "method": "ping"}
                        self.wfile.write(b"data: " + json.dumps(ev).encode() + b"\n\n")
                except (BrokenPipeError, ConnectionResetError):
                    return
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()


def stdio(mode):
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        msg = json.loads(line)
        m = msg.get("method")
        r = None
        if m == "initialize":
            r = init_result(msg)
        elif m == "tools/list":
            r = toollist(mode, msg)
        elif m == "tools/call":
            if mode in LISTS or mode in ("bigschema", "regexbomb"):
                out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                                      "result": {"content": [{"type": "text", "text": "ok"}]}}).encode() + b"\n")
                out.flush()
                continue
            if mode == "bigline":
                out.write(bigjson(msg["id"]) + b"\n")
                out.flush()
                continue
            if mode == "deep":
                out.write(b"[" * 100000 + b"]" * 100000 + b"\n")
                out.flush()
                continue
            if mode == "schemawork":
                res = {"content": [], "structuredContent": {"e": deepnode(60)}}
                out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": res}).encode() + b"\n")
                out.flush()
                continue
            i = 0
            try:
                while True:  # never reads stdin again
                    i += 1
                    out.write(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % (9000 + i))
                    out.write(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"%d"}}\n' % i)
            except BrokenPipeError:
                return
        if "id" in msg and r is not None:
            out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": r}).encode() + b"\n")
            out.flush()


if sys.argv[1] == "stdio":
    stdio(sys.argv[2])
else:
    s = ThreadingHTTPServer(("127.0.0.1", 0), H)
    s.n = 0
    open(sys.argv[3] + ".tmp", "w").write(str(s.server_address[1]))
    os.rename(sys.argv[3] + ".tmp", sys.argv[3])
    s.serve_forever()
