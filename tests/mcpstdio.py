#!/usr/bin/env python3
# mcpstdio: a minimal stdio MCP server for the tests. Its tools carry readOnlyHint when the
# environment asks (MCP_HINT=readonly); meet(name) writes DIR/NAME.in and waits
# (MCP_MEET_WAIT seconds) for the file of the other name, so two jobs calling it learn whether they ran at once.
import json, os, sys, time

hint = os.environ.get("MCP_HINT") == "readonly"
meetdir = os.environ.get("MCP_MEET", "/tmp")

def tool(name):
    t = {"name": name, "inputSchema": {"type": "object", "properties": {"me": {"type": "string"},
                                                                         "other": {"type": "string"}}}}
    if hint:
        t["annotations"] = {"readOnlyHint": True, "title": name}
    return t

for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    m, r = msg.get("method"), None
    if m == "initialize":
        r = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "mcpstdio", "version": "1"}}
    elif m == "tools/list":
        r = {"tools": [tool("meet"), tool("look"), tool("list_directory_with_sizes_in_detail")]}
    elif m == "tools/call":
        a = msg["params"].get("arguments") or {}
        text = "looked"
        if msg["params"]["name"] == "meet":
            open(os.path.join(meetdir, a["me"] + ".in"), "w").close()
            other = os.path.join(meetdir, a["other"] + ".in")
            for _ in range(int(float(os.environ.get("MCP_MEET_WAIT", "30")) * 10)):
                if os.path.exists(other):
                    break
                time.sleep(0.1)
            text = "met" if os.path.exists(other) else "alone"
        r = {"content": [{"type": "text", "text": text}]}
    if r is None:
        out = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}}
    else:
        out = {"jsonrpc": "2.0", "id": msg["id"], "result": r}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
