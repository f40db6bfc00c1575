#!/usr/bin/env python3
"""A stateless loopback model for long jobs and budgets: speaks OpenAI chat completions, counts
tokens as the real API bills them (here: one token per 4 bytes of the request body, rounded up),
refuses a request whose input plus max_tokens/max_completion_tokens passes its context window
(400, code context_length_exceeded), and plays a part chosen from the request alone: the turn is the
number of the newest call it was sent plus one (call ids are call_TURN_I), the role a word ROLE=NAME in the system prompt.

usage: longmodel.py CONFIG.json PORTFILE LOGFILE

CONFIG: {"window": 64000, "seed": 1, "roles": {NAME: PLAN}}; a PLAN is
  {"turns": N, "command": "shell line"}           N turns each calling shell with the command, then final_result
  {"turns": N, "write": BYTES}                     N turns each calling write_file with BYTES of text, then final_result
  {"turns": N, "delegate": "WORKER", "fanout": [a, b]}
                                                   N turns each calling WORKER a to b times (random) in one reply,
                                                   then final_result
  "output": [a, b]                                 completion tokens reported, at most the request's cap (default [20, 200])
  "talk": [K, BYTES]                               every K-th turn a reply of BYTES of text and no call first (the
                                                   runner's nudge after it is answered with the turn's call)
A request without tools is a summary request (context.compact: summarize): it is answered with
"summary" bytes of text (default 2000), and logged with "summary": true; with "summary_usage": false
its answer reports no usage; with "summary_status": S (not 200) it is refused with that status.
Each request is logged as one JSON line {"n", "role", "turn", "bytes", "tokens", "cap", "output",
"messages": [sha256 of each message], "notes": [tool results that are elision notes], "status"}."""
import hashlib, json, math, random, re, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

config = json.load(open(sys.argv[1]))
portfile, logfile = sys.argv[2], sys.argv[3]
lock = threading.Lock()
count = [0]


def digest(m):
    return hashlib.sha256(json.dumps(m, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the providers' APIs: a client may reuse its connection

    def log_message(self, *a):
        pass

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("content-length", "0")))
        body = json.loads(raw)
        msgs = body.get("messages", [])
        system = " ".join(m.get("content") or "" for m in msgs if m.get("role") == "system")
        role = (re.search(r"ROLE=(\w+)", system) or [None, "main"])[1]
        plan = config["roles"][role]
        # the turn: one past the newest call's (ids are call_TURN_I), so that a conversation whose
        # older turns the runner collapsed into a note still counts them
        turns = [int(tc["id"].split("_")[1]) for m in msgs if m.get("role") == "assistant"
                 for tc in m.get("tool_calls") or [] if re.match(r"call_\d+_\d+$", str(tc.get("id")))]
        # and no less than a text turn's or a summary's own number (their calls may be gone)
        for m in msgs:
            for k in re.findall(r"(?:thought |summary of turns before )(\d+)\.", str(m.get("content") or "")):
                turns.append(int(k) - 1)
        turn = max(turns) + 1 if turns else 0
        tokens = math.ceil(len(raw) / 4)
        cap = body.get("max_completion_tokens", body.get("max_tokens"))
        window = config.get("window", 128000)
        rec = {"role": role, "turn": turn, "bytes": len(raw), "tokens": tokens, "cap": cap,
               "messages": [digest(m) for m in msgs],
               "notes": [m.get("content") for m in msgs if m.get("role") in ("tool", "user") and str(m.get("content")).startswith("[elided")]}
        with lock:
            count[0] += 1
            rec["n"] = count[0]
        if not isinstance(cap, int) or cap < 1 or tokens + cap > window:
            rec["status"] = 400
            self.log(rec)
            return self.reply(400, {"error": {"message": "This model's maximum context length is %d tokens. However, you "
                              "requested %d tokens (%d in the messages, %s in the completion)." % (window, tokens + (cap or 0), tokens, cap),
                              "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}})
        rnd = random.Random("%s/%s/%d/%s" % (config.get("seed", 1), role, turn, rec["messages"][1] if len(msgs) > 1 else ""))
        lo, hi = plan.get("output", [20, 200])
        out = min(cap, rnd.randint(lo, hi))
        if "tools" not in body:  # a summary of older turns: text only
            rec["status"], rec["output"], rec["summary"] = config.get("summary_status", 200), out, True
            self.log(rec)
            if rec["status"] != 200:
                return self.reply(rec["status"], {"error": {"message": "summary refused", "type": "server_error"}})
            text = ("summary of turns before %d. " % turn) * (config.get("summary", 2000) // 30 + 1)
            return self.text(body, rec, text[:config.get("summary", 2000)], tokens, out,
                             config.get("summary_usage", True))
        talk = plan.get("talk")
        nudged = len(msgs) >= 2 and msgs[-1].get("role") == "user" and msgs[-2].get("role") == "assistant" \
            and not msgs[-2].get("tool_calls")
        if talk and turn < plan["turns"] and turn % talk[0] == 0 and not nudged:
            rec["status"], rec["output"] = 200, out
            self.log(rec)
            return self.text(body, rec, ("thought %d. " % turn) * (talk[1] // 12 + 1), tokens, out)
        if turn >= plan["turns"]:
            calls = [("final_result", {"turns": turn})]
        elif "delegate" in plan:
            a, b = plan.get("fanout", [1, 1])
            calls = [(plan["delegate"], {"input": "part %d of turn %d" % (i, turn)}) for i in range(rnd.randint(a, b))]
        elif "write" in plan:
            text = ("%d " % turn) * (plan["write"] // (len(str(turn)) + 1) + 1)
            calls = [("write_file", {"path": "f%d.txt" % (turn % 7), "content": text[:plan["write"]]})]
        else:
            calls = [("shell", {"command": plan["command"]})]
        rec["status"] = 200
        rec["output"] = out
        self.log(rec)
        msg = {"role": "assistant", "content": None,
               "tool_calls": [{"id": "call_%d_%d" % (turn, i), "type": "function",
                               "function": {"name": n, "arguments": json.dumps(a)}} for i, (n, a) in enumerate(calls)]}
        self.reply(200, {"id": "c%d" % rec["n"], "object": "chat.completion", "model": body.get("model"),
                         "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls"}],
                         "usage": {"prompt_tokens": tokens, "completion_tokens": out, "total_tokens": tokens + out}})

    def text(self, body, rec, text, tokens, out, usage=True):
        msg = {"role": "assistant", "content": text}
        answer = {"id": "c%d" % rec["n"], "object": "chat.completion", "model": body.get("model"),
                  "choices": [{"index": 0, "message": msg, "finish_reason": "stop"}]}
        if usage:
            answer["usage"] = {"prompt_tokens": tokens, "completion_tokens": out, "total_tokens": tokens + out}
        self.reply(200, answer)

    def log(self, rec):
        with lock, open(logfile, "a") as f:
            f.write(json.dumps(rec) + "\n")


srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
