#!/usr/bin/env python3
"""A stateless loopback model server for the recipes' end-to-end tests: it plays one job's
trajectory, picking each reply from the conversation it is sent (nothing is kept between
requests), as OpenAI chat completions (/v1/chat/completions) or Anthropic messages (/v1/messages).

usage: recipemodel.py TRAJECTORY.json PORTFILE LOGFILE

TRAJECTORY is a JSON list of turns; the reply to a request is turn N where N is the number of
assistant turns the conversation already holds. A turn is
  {"calls": [[TOOL, {ARGS}], ...]}    tool calls ("final_result" ends the job)
  {"text": "..."}                     a plain reply
with "expect": "TEXT" (optional): the conversation's last tool result must hold TEXT, else the
server answers 400 saying so (the job then fails, and the test with it): the trajectory is only
played when the tools really did what it assumes (a test failed, then passed, a file held ...).
Every request is appended to LOGFILE as one JSON line {"path", "turn", "problem"}. The chosen port
is written to PORTFILE once the server listens."""
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

trajectory = json.load(open(sys.argv[1]))
portfile, logfile = sys.argv[2], sys.argv[3]


def blocktext(c):
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return "".join(blocktext(b.get("text", b.get("content", ""))) if isinstance(b, dict) else str(b) for b in c)
    return ""


def conversation(body, anthropic):
    """(assistant turns so far, the last tool result's text)"""
    turns, last = 0, ""
    for m in body.get("messages", []):
        if m.get("role") == "assistant":
            turns += 1
        elif m.get("role") == "tool":
            last = blocktext(m.get("content"))
        elif anthropic and m.get("role") == "user" and isinstance(m.get("content"), list):
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    last = blocktext(b.get("content"))
    return turns, last


def reply(turn, n, anthropic):
    calls = turn.get("calls", [])
    if anthropic:
        content = [{"type": "text", "text": turn["text"]}] if turn.get("text") else []
        content += [{"type": "tool_use", "id": f"toolu_{n}_{i}", "name": c[0], "input": c[1]} for i, c in enumerate(calls)]
        return {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": "recipe", "content": content,
                "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": 900, "output_tokens": 60, "cache_read_input_tokens": 0,
                          "cache_creation_input_tokens": 0}}
    msg = {"role": "assistant", "content": turn.get("text")}
    if calls:
        msg["tool_calls"] = [{"id": f"call_{n}_{i}", "type": "function",
                              "function": {"name": c[0], "arguments": json.dumps(c[1])}} for i, c in enumerate(calls)]
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "model": "recipe",
            "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 900, "completion_tokens": 60, "total_tokens": 960}}


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        anthropic = self.path.rstrip("/").endswith("/messages")
        n, last = conversation(body, anthropic)
        problem = None
        if n >= len(trajectory):
            problem = f"the trajectory has {len(trajectory)} turns; the conversation asks for turn {n + 1}"
        elif trajectory[n].get("expect") and trajectory[n]["expect"] not in last:
            problem = f"turn {n + 1} expects {trajectory[n]['expect']!r} in the last tool result, got {last[-400:]!r}"
        with open(logfile, "a") as f:
            f.write(json.dumps({"path": self.path, "turn": n + 1, "problem": problem}) + "\n")
        if problem:
            out, status = ({"type": "error", "error": {"type": "invalid_request_error", "message": problem}} if anthropic
                           else {"error": {"message": problem, "type": "invalid_request_error", "code": None}}), 400
        else:
            out, status = reply(trajectory[n], n, anthropic), 200
        data = json.dumps(out).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
