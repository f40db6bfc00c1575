#!/usr/bin/env python3
"""Write the hand-made seed inputs of every fuzz target into tests/fuzz/corpus/NAME/seed-*.

Usage: tests/fuzz/seeds.py [RUN]   RUN: a finished run directory of examples/hello, whose
manifest, events and snapshot layers become seeds too. The files it writes are committed with
the corpora; run it again only to add seeds (libFuzzer's -merge=1 then keeps what adds coverage).
Input formats are described at the top of each tests/fuzz/fuzz_*.c."""
import io, json, os, re, subprocess, sys, tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(HERE, "corpus")
RUN = sys.argv[1] if len(sys.argv) > 1 else None


def put(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def rd(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


# ---- manifest: MANIFEST \n%%%\n WORKERFILE(w.md) \n%%%\n SCRIPT(s.yaml) ----
SEP = "\n%%%\n"
hello = rd(os.path.join(ROOT, "examples/hello/nightshift.yaml")).replace("script.yaml", "s.yaml").replace(
    "workspace: workspace", "workspace: ws")
script = rd(os.path.join(ROOT, "examples/hello/script.yaml"))
put("manifest", "hello", hello + SEP + SEP + script)
full = """version: 1
name: t
workspace: ws
models:
  default: { provider: scripted, script: s.yaml }
  o: { provider: openai, model: m1, base_url: 'http://127.0.0.1:1/v1', temperature: 0.5, retries: 4, timeout: 30s }
  c: { provider: anthropic, model: claude, api_key_env: KEY, max_output_tokens: 100 }
sandbox: { backend: none, timeout: 10s, memory: 512M, cpus: 0.5, pids: 10, env: [HOME], mounts: [ { source: ws, target: /data, mode: rw } ] }
snapshot: { level: 5, threads: 2, exclude: ['node_modules/**'], max_size: 1G }
secrets: [TOKEN]
workers:
  inline:
    description: the same worker
    model: o
    instructions: |
      Review ${{ inputs.day }} and ${{ env.NS_FUZZ_ENV }}.
    tools: [shell, read_file, write_file, list_dir, edit_file]
    delegates: [filed]
    approval:
      default: deny
      rules:
        - { tool: shell, command: 'git log *', decision: allow }
        - { tool: write_file, path: 'reports/**', decision: allow }
        - { tool: filed, decision: allow }
        - { tool: shell, command: 'curl *', decision: abort }
      examples:
        allow: ["git log -1"]
        deny: ["git log; rm -rf /", "git log $(cat /etc/passwd)"]
    output: { type: object, required: [ok], properties: { ok: { type: boolean }, n: { type: integer, minimum: 0 } } }
    max_turns: 7
    max_tokens: 1000
    sandbox: { network: host }
  filed:
    file: w.md
jobs:
  a: { worker: inline, input: 'on ${{ inputs.day }}' }
  b: { worker: filed, needs: [a], input: 'got ${{ jobs.a.output.findings.1.b }} ${{ jobs.a.output }}', sandbox: { timeout: 5s }, max_turns: 3, retries: 2, timeout: 30m, continue_on_error: true, files: [reports/x.md] }
"""
worker = """---
description: the same worker
model: default
tools: [shell, read_file]
approval:
  rules:
    - { tool: shell, command: 'git log *', decision: allow }
output: { type: object, required: [ok], properties: { ok: { type: boolean } } }
max_turns: 7
---
Review ${{ inputs.day }}.
"""
replies = "- text: hello\n- tool_calls: [ { name: final_result, arguments: { ok: true, n: 1.5, s: 'x' } } ]\n"
put("manifest", "full", full + SEP + worker + SEP + replies)
put("manifest", "inline-replies", "version: 1\nmodels:\n  d: { provider: scripted, replies: [ {text: hi}, {tool_calls: [{name: shell, arguments: {command: ls}}]} ] }\n"
    "workers:\n  w: { instructions: x, model: d, tools: [shell] }\njobs:\n  j: { worker: w }\n")
put("manifest", "alias-bomb", "version: 1\nmodels:\n  d:\n    provider: scripted\n    replies:\n"
    "      - &a [x, x, x, x, x, x, x, x, x]\n      - &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    "      - &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n      - &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    "workers:\n  w: { instructions: x, model: d }\njobs:\n  j: { worker: w }\n")
put("manifest", "cycle", "version: 1\nmodels:\n  d: { provider: scripted, replies: [ {text: hi} ] }\n"
    "workers:\n  w: { instructions: x, model: d }\njobs:\n  a: { worker: w, needs: [b] }\n  b: { worker: w, needs: [a] }\n")
# The broken manifests of tests/e2e/badmanifest.py, '^' markers removed.
src = rd(os.path.join(ROOT, "tests/e2e/badmanifest.py"))
ns = {}
os.environ.setdefault("NIGHTSHIFT", "/bin/false")
exec(src[: src.index("passed = failed")], ns)
for i, (name, text, _) in enumerate(ns["cases"]):
    put("manifest", "bad-%02d" % i, text.replace("^", "", 1))
put("manifest", "bad-workerfile", "version: 1\n" + ns["M"] + "workers:\n  w: { file: w.md, model: d }\n" + ns["J"] + SEP
    + ns["wfile"].replace("^", "", 1))

# ---- expr: TEXT \0 OUTPUT ----
out = json.dumps({"verdict": "ok", "findings": ["a", {"b": [1, 2.5, None, True]}], "n": 3})
for i, t in enumerate([
    "Summarize: ${{ jobs.a.output.findings }}", "${{ jobs.a.output }}", "${{jobs.a.output.findings.1.b.0}} x",
    "${{ inputs.day }} and ${{ inputs.nested }}", "${{ env.NS_FUZZ_ENV }}", "${{ env.NOPE }}", "${{ jobs.b.output }}",
    "${{ jobs.c.output }}", "${{ nope.x }}", "${{ inputs }}", "${{ inputs.day.x }}", "${{", "a }} b ${{ inputs.day }}",
    "${{ jobs.a.output.findings.-1 }}", "${{ jobs.a.output.findings.99999999999999999999 }}", "${{ jobs.a.outputs }}",
    "plain text", "${{ jobs.a.output.. }}", "${{ \tinputs.day\t }}"]):
    put("expr", "%02d" % i, t.encode() + b"\0" + out.encode())

# ---- shellsplit: one command line ----
src = rd(os.path.join(ROOT, "tests/unit/test_shellsplit.c"))
lines = set()
for m in re.finditer(r'^\s*\{"((?:[^"\\]|\\.)*)",', src, re.M):
    lit = m.group(1)
    try:
        lines.add(lit.encode("latin-1", "backslashreplace").decode("unicode_escape").encode("latin-1", "replace"))
    except Exception:
        pass
for i, l in enumerate(sorted(lines)):
    put("shellsplit", "%03d" % i, l)
put("shellsplit", "paths", b"/workspace/../workspace/a/./b//c")

# ---- schema: SCHEMA \0 VALUE ----
sdir = "/usr/share/json-schema-test-suite/tests/draft7"
n = 0
if os.path.isdir(sdir):
    for fn in sorted(os.listdir(sdir)):
        if not fn.endswith(".json"):
            continue
        for group in json.loads(rd(os.path.join(sdir, fn))):
            for t in group["tests"][:2]:
                put("schema", "%04d" % n, json.dumps(group["schema"]).encode() + b"\0" + json.dumps(t["data"]).encode())
                n += 1
put("schema", "worker", json.dumps({"type": "object", "required": ["verdict", "findings"], "properties": {
    "verdict": {"enum": ["ok", "needs-work"]}, "findings": {"type": "array", "items": {"type": "string"}},
    "re": {"type": "string", "pattern": "^[a-z]+\\d{2,3}(?:x|y)*$"}}, "$defs": {"a": {"$ref": "#/$defs/a"}}}).encode()
    + b"\0" + json.dumps({"verdict": "ok", "findings": ["x", 1], "re": "ab12"}).encode())

# ---- llm: API byte (0 OpenAI, 1 Anthropic) + body ----
oa = [
    {"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
     "usage": {"prompt_tokens": 10, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 4},
               "completion_tokens_details": {"reasoning_tokens": 1}}},
    {"choices": [{"message": {"content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{\"command\":\"ls\"}"}},
        {"type": "function", "function": {"name": "read_file", "arguments": {"path": "a"}}},
        {"id": "c3", "function": {"name": "x", "arguments": "{not json"}}]}, "finish_reason": "tool_calls"}]},
    {"choices": [{"message": {"content": [{"type": "text", "text": "a"}, {"text": "b"}], "refusal": "no"},
                  "finish_reason": "length"}]},
    {"choices": [{"message": {"refusal": "I can't"}, "finish_reason": "content_filter"}]},
    {"choices": [{"message": {"tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "[1]"}}]},
                  "finish_reason": "length"}], "usage": {"prompt_tokens": 1e300, "completion_tokens": -5}},
    {"error": {"message": "bad"}}, {"choices": []},
]
for i, b in enumerate(oa):
    put("llm", "openai-%d" % i, b"\0" + json.dumps(b).encode())
an = [
    {"id": "m", "type": "message", "role": "assistant", "content": [{"type": "text", "text": "hi"}],
     "stop_reason": "end_turn", "usage": {"input_tokens": 5, "output_tokens": 1, "cache_read_input_tokens": 2,
                                          "cache_creation_input_tokens": 3}},
    {"content": [{"type": "thinking", "thinking": "x"}, {"type": "text", "text": "a"},
                 {"type": "tool_use", "id": "t1", "name": "shell", "input": {"command": "ls"}},
                 {"type": "tool_use", "id": "t2", "name": "f", "input": [1]}], "stop_reason": "tool_use"},
    {"content": [{"type": "tool_use", "id": "t1", "name": "shell", "input": {"command": "l"}}],
     "stop_reason": "max_tokens"},
    {"content": [{"type": "tool_use", "name": "shell"}], "stop_reason": "tool_use"},
    {"content": [], "stop_reason": "refusal"}, {"content": [{"type": "text", "text": ""}], "stop_reason": "pause_turn"},
    {"content": [{"type": "text", "text": "x"}], "usage": {"input_tokens": 9e18, "cache_read_input_tokens": 9e18}},
    {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
]
for i, b in enumerate(an):
    put("llm", "anthropic-%d" % i, b"\1" + json.dumps(b).encode())

# ---- events: FLAGS TRIM TEXT [\0 RUNJSON] ----
ev = []
prev = "0" * 64
import hashlib
for i, (t, extra) in enumerate([("job_start", {"job": "a"}), ("snapshot", {"layer": "snapshots/0001.tar.zst", "sha256": "0" * 64}),
                                ("snapshot", {"layer": "../etc/passwd", "sha256": "x"}), ("decision", {"step": 1}),
                                ("job_end", {"status": "succeeded"})]):
    line = json.dumps(dict({"seq": i, "time": "2026-01-01T00:00:00.000Z", "type": t, "prev": prev}, **extra),
                      separators=(",", ":"))
    ev.append(line)
    prev = hashlib.sha256(line.encode()).hexdigest()
text = ("\n".join(ev) + "\n").encode()
runjson = json.dumps({"status": "succeeded", "jobs": {"a": {"status": "succeeded", "events": len(ev),
                                                              "events_head": prev}}}).encode()
put("events", "whole", b"\x08\0" + text + b"\0" + runjson)
put("events", "incomplete", b"\x00\0" + text)
put("events", "unterminated", b"\x00\0" + text[:-30])
put("events", "cut-frame", b"\x02\0" + text)
put("events", "trimmed", b"\x0c\x11" + text + b"\0" + runjson)
put("events", "bad-json", b"\x08\0" + b'{"seq":0,"prev":"' + b"0" * 64 + b'"}\nnot json\n{"seq":2}\n' + b"\0" + b'{"jobs":{"a":{"events_head":"x","events":1e300}}}')
if RUN:
    raw = rd(os.path.join(RUN, "jobs/hello/events.jsonl.zst"), "rb")
    plain = subprocess.run(["zstd", "-dc"], input=raw, capture_output=True, check=True).stdout
    put("events", "hello-raw", b"\x09\0" + raw + b"\0" + rd(os.path.join(RUN, "run.json"), "rb"))
    put("events", "hello-raw-cut", b"\x01\0" + raw[: len(raw) * 2 // 3])
    put("events", "hello", b"\x08\0" + plain + b"\0" + rd(os.path.join(RUN, "run.json"), "rb"))
    put("manifest", "hello-run", rd(os.path.join(RUN, "manifest/nightshift.yaml")))


# ---- snapshot: FLAGS LAYER [\0NS-LAYER\0 LAYER]... ----
LSEP = b"\0NS-LAYER\0"
SH = "/tmp/nsfuzz-outside"


def tar(entries, fmt=tarfile.PAX_FORMAT):
    """entries: (name, kind, arg, extra) with kind f (arg: content), d, l (symlink to arg), h (hard
    link to arg), c (char device), p (fifo); extra: dict of TarInfo attributes or pax headers."""
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w", format=fmt) as t:
        for e in entries:
            name, kind, arg = e[:3]
            extra = e[3] if len(e) > 3 else {}
            ti = tarfile.TarInfo(name)
            ti.mtime = 1700000000
            data = None
            if kind == "f":
                data = arg.encode() if isinstance(arg, str) else arg
                ti.size = len(data)
                ti.mode = 0o644
            elif kind == "d":
                ti.type, ti.mode = tarfile.DIRTYPE, 0o755
            elif kind == "l":
                ti.type, ti.linkname = tarfile.SYMTYPE, arg
            elif kind == "h":
                ti.type, ti.linkname = tarfile.LNKTYPE, arg
            elif kind == "c":
                ti.type, ti.devmajor, ti.devminor = tarfile.CHRTYPE, 1, 3
            elif kind == "p":
                ti.type = tarfile.FIFOTYPE
            for k, v in extra.items():
                if k == "pax":
                    ti.pax_headers = v
                else:
                    setattr(ti, k, v)
            t.addfile(ti, io.BytesIO(data) if data is not None else None)
    return bio.getvalue()


WH = {"pax": {"SCHILY.xattr.nightshift.whiteout": "file"}}
OPQ = {"pax": {"SCHILY.xattr.nightshift.whiteout": "opaque"}}
snap = {
    "plain": (0, [tar([("a", "d", None), ("a/x", "f", "x\n"), ("a/l", "l", "x"), ("a/h", "h", "a/x"), ("b", "f", "")])]),
    "absolute": (0, [tar([(SH + "/victim", "f", "pwned\n")])]),
    "dotdot": (0, [tar([("../outside/victim", "f", "pwned\n"), ("a/../../outside/victim", "f", "pwned\n")])]),
    "symlink-dir-then-file": (0, [tar([("l", "l", "../outside"), ("l/victim", "f", "pwned\n"), ("l/new", "f", "x")])]),
    "symlink-abs-then-file": (0, [tar([("l", "l", SH), ("l/victim", "f", "pwned\n")])]),
    "symlink-then-overwrite": (0, [tar([("v", "l", "../outside/victim"), ("v", "f", "pwned\n")])]),
    "symlink-then-dir": (0, [tar([("v", "l", "../outside"), ("v", "d", None, {"mode": 0o777}), ("v/x", "f", "x")])]),
    "hardlink-out": (0, [tar([("h", "h", "../outside/victim"), ("h2", "h", SH + "/victim"), ("h", "f", "pwned\n")])]),
    "hardlink-to-symlink": (0, [tar([("s", "l", "../outside/victim"), ("h", "h", "s"), ("h", "f", "pwned\n")])]),
    "symlink-across-layers": (0, [tar([("d", "l", "../outside")]), tar([("d/victim", "f", "pwned\n")])]),
    "symlink-parent-across-layers": (0, [tar([("a", "d", None), ("a/b", "l", "../../outside")]),
                                          tar([("a/b/victim", "f", "pwned\n"), ("a/b/new", "f", "new")])]),
    "whiteout-through-symlink": (0, [tar([("d", "l", "../outside")]), tar([("d/.wh.victim", "f", "", WH)])]),
    "opaque-through-symlink": (0, [tar([("d", "l", SH)]), tar([("d/.wh..wh..opq", "f", "", OPQ)])]),
    "whiteout-dotdot": (0, [tar([("a", "d", None)]), tar([("a/.wh...", "f", "", WH), (".wh..", "f", "", WH)])]),
    "whiteouts-forced": (4, [tar([(".wh.out", "f", "", WH), (".wh.victim", "f", "", WH), (".wh.d", "f", "", WH)])]),
    "opaque-root-forced": (4, [tar([(".wh..wh..opq", "f", "", OPQ), ("x", "f", "x")])]),
    "forced-end": (6, [tar([("n", "f", "n")]), tar([("out", "f", "replaces the symlink")])]),
    "devices": (0, [tar([("dev", "c", None), ("fifo", "p", None), ("suid", "f", "x", {"mode": 0o4755}),
                         ("sgid", "d", None, {"mode": 0o2775})])]),
    "closed-dir": (0, [tar([("c", "d", None, {"mode": 0}), ("c/f", "f", "x"), ("c/d", "d", None, {"mode": 0o500}),
                            ("c/d/g", "f", "y")]), tar([("c/f", "f", "z"), ("c/d/.wh.g", "f", "", WH)])]),
    "dir-file-swap": (0, [tar([("a", "d", None), ("a/x", "f", "1")]), tar([(".wh.a", "f", "", WH), ("a", "f", "now a file")]),
                          tar([("a", "d", None), ("a/y", "l", "/etc/passwd")])]),
    "names": (0, [tar([("./a", "f", "x"), ("a//b", "f", "y"), ("t/", "d", None), ("f/", "f", "z"),
                       ("x" * 250 + "/" + "y" * 250, "f", "long"), ("é\u202e.txt", "f", "bidi")])]),
    "bad-digest": (8, [tar([("a", "f", "x")])]),
    "gnu": (0, [tar([("g" * 200, "f", "long name"), ("s", "l", "t" * 300)], fmt=tarfile.GNU_FORMAT)]),
    "pax-path-escape": (0, [tar([("ok", "f", "x", {"pax": {"path": "../outside/victim"}}),
                                 ("ok2", "l", "x", {"pax": {"linkpath": "/tmp/nsfuzz-outside/victim"}}),
                                 ("h", "h", "ok", {"pax": {"linkpath": "../outside/victim"}}),
                                 ("h", "f", "pwned")])]),
    "pax-huge": (0, [tar([("big", "f", "x", {"pax": {"size": "1000000000000"}}),
                          ("sparse", "f", "x", {"pax": {"GNU.sparse.major": "1", "GNU.sparse.minor": "0",
                                                         "GNU.sparse.name": "sp", "GNU.sparse.realsize": "1099511627776"}})])]),
}
# Headers no library writes: an 8 GiB size with no data, a size in base-256, a huge pax length.
def rawheader(name, size_field, typ=b"0", prefix=b""):
    h = bytearray(512)
    h[0:len(name)] = name
    h[100:108] = b"0000644\0"
    h[108:116] = b"0000000\0"
    h[116:124] = b"0000000\0"
    h[124:136] = size_field
    h[136:148] = b"14533674000\0"
    h[156:157] = typ
    h[257:263] = b"ustar\0"
    h[263:265] = b"00"
    h[345:345 + len(prefix)] = prefix
    h[148:156] = b" " * 8
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h)


snap["header-8g"] = (0, [rawheader(b"big", b"77777777777\0") + b"x" * 512])
snap["header-base256"] = (0, [rawheader(b"b256", b"\x80" + b"\0" * 3 + b"\x7f" + b"\xff" * 7) + b"y" * 512])
snap["header-negative"] = (0, [rawheader(b"neg", b"\xff" * 12) + b"z" * 512])
snap["header-pax-len"] = (0, [rawheader(b"././@PaxHeader", b"00000000100\0", b"x") + b"99999999999999 path=a\n".ljust(512, b"\0")
                              + rawheader(b"a", b"00000000001\0") + b"a".ljust(512, b"\0")])
snap["header-prefix-dotdot"] = (0, [rawheader(b"victim", b"00000000006\0", prefix=b"../outside") + b"pwned\n".ljust(512, b"\0")])
snap["header-longlink"] = (0, [rawheader(b"././@LongLink", b"00000010000\0", b"L") + b"n" * 4096
                               + rawheader(b"short", b"00000000001\0") + b"a".ljust(512, b"\0")])
for name, (flags, layers) in snap.items():
    put("snapshot", name, bytes([flags]) + LSEP.join(layers))
if RUN:
    layers = []
    for f in sorted(os.listdir(os.path.join(RUN, "snapshots"))):
        raw = rd(os.path.join(RUN, "snapshots", f), "rb")
        layers.append(subprocess.run(["zstd", "-dc"], input=raw, capture_output=True, check=True).stdout)
    put("snapshot", "hello-layers", b"\0" + LSEP.join(layers[:-1]))
    put("snapshot", "hello-end", b"\2" + layers[-1])
    archive = subprocess.run(["tar", "-C", RUN, "-cf", "-", "."], capture_output=True, check=True).stdout
    put("snapshot", "hello-run-archive", b"\1" + archive)
    put("snapshot", "hello-run-archive-end", b"\3" + archive)
    # A run archive that also carries a symlink and a path out.
    bad = tar([("SHA256SUMS", "f", rd(os.path.join(RUN, "SHA256SUMS"))), ("snapshots", "l", "../outside"),
               ("../outside/victim", "f", "pwned")])
    put("snapshot", "run-archive-hostile", b"\1" + bad)

# ---- httphead: the bytes a step sends the egress proxy ----
for i, h in enumerate([
        b"CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n\r\n",
        b"GET http://example.com/x?y=1 HTTP/1.1\r\nHost: example.com\r\nProxy-Connection: keep-alive\r\n\r\nbody",
        b"GET http://name.test/\0x HTTP/1.1\r\nHost: x\r\n\r\n",          # issue 28: a NUL before the CRLF
        b"CONNECT 127.0.0.1:1\0 HTTP/1.1\r\n\r\n",
        b"GET http://a/ HTTP/1.1\r\nHost: \0x\r\n\r\n",
        b"GET http://a/ HTTP/1.1\nHost: x\n\n",
        b"GET http://a/ HTTP/1.1\r\nHost: x\r\n  folded\r\n\r\n",
        b"GET http://a/\x1b[2J HTTP/1.1\r\n\r\n",
        b"\r\nGET http://a/ HTTP/1.1\r\n\r\n",
        b"GET http://a/ HTTP/1.1\r\nX: " + b"a" * 17000,
        b"GET http://a/ HTTP/1.1\r",
        b"G" * 20 + b" http://a/ HTTP/1.1\r\n\r\n",
        b"GET http://a/ HTTP/2.0\r\n\r\n",
        b"GET  HTTP/1.1\r\n\r\n",
        b"GET http://a/ HTTP/1.1\r\n: novalue\r\n\r\n"]):
    put("httphead", "%02d" % i, h)

# ---- mcpframe: MODE('s' stdio, else SSE) STEP BYTES ----
ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
ans = b'{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}'
for i, b in enumerate([
        b"s\x05" + ans + b"\n",
        b"s\x01" + ping + b"\r\n" + ping + b"\n" + b"not json\n" + ans + b"\n",
        b"s\x07" + b"[" + ping + b"," + ans + b",1]\n",
        b"s\x03" + b"[" * 200 + b"]" * 200 + b"\n",           # deeper than the budget
        b"s\x10" + b"[" + b"0," * 3000 + b"0]\n",
        b"s\x02" + b'{"a":"\\"}\n' + ans + b"\n",
        b"e\x04" + b"event: message\r\ndata: " + ans + b"\r\n\r\n",
        b"e\x01" + b"id: 42\nretry: 500\ndata: " + ping + b"\n\n" + b"data: {\"jsonrpc\":\n" + b"data: \"2.0\",\"id\":7,\"result\":{}}\n\n",
        b"e\x09" + b": comment\n\ndata:" + ans,
        b"e\x02" + b"retry: 99999999999999999999\nid: \0x\n\n",
        b"e\x05" + (b"data: " + ping + b"\n\n") * 50]):
    put("mcpframe", "%02d" % i, b)

# ---- evstream: API(even converse, odd invoke) BODY: AWS event stream frames ----
import base64, struct, zlib


def evframe(headers, payload):
    hb = b"".join(bytes([len(k)]) + k.encode() + b"\x07" + struct.pack(">H", len(v)) + v.encode()
                  for k, v in headers)
    prelude = struct.pack(">II", 16 + len(hb) + len(payload), len(hb))
    msg = prelude + struct.pack(">I", zlib.crc32(prelude)) + hb + payload
    return msg + struct.pack(">I", zlib.crc32(msg))


def evevent(t, obj):
    return evframe([(":message-type", "event"), (":event-type", t), (":content-type", "application/json")],
                   json.dumps(obj).encode())


def evexc(t, msg):
    return evframe([(":message-type", "exception"), (":exception-type", t)], json.dumps({"message": msg}).encode())


conv = (evevent("messageStart", {"role": "assistant"}) +
        evevent("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Look"}}) +
        evevent("contentBlockStop", {"contentBlockIndex": 0}) +
        evevent("contentBlockStart", {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "t1", "name": "shell"}}}) +
        evevent("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": "{\"command\": "}}}) +
        evevent("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": "\"ls\"}"}}}) +
        evevent("contentBlockStop", {"contentBlockIndex": 1}) +
        evevent("messageStop", {"stopReason": "tool_use"}) +
        evevent("metadata", {"usage": {"inputTokens": 9, "outputTokens": 3}, "metrics": {"latencyMs": 1}}))


def evchunk(obj):
    return evevent("chunk", {"bytes": base64.b64encode(json.dumps(obj).encode()).decode(), "p": "ab"})


inv = (evchunk({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [],
                                                      "usage": {"input_tokens": 5, "output_tokens": 1}}}) +
       evchunk({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}) +
       evchunk({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}}) +
       evchunk({"type": "content_block_stop", "index": 0}) +
       evchunk({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}) +
       evchunk({"type": "message_stop"}))
for i, b in enumerate([
        b"\x00" + conv,
        b"\x01" + inv,
        b"\x00" + conv[:40] + evexc("throttlingException", "slow down"),
        b"\x01" + evexc("modelStreamErrorException", "broke"),
        b"\x00" + conv[:-3],
        b"\x00" + evevent("contentBlockDelta", {"contentBlockIndex": 5000, "delta": {"text": "x"}}),
        b"\x01" + evevent("chunk", {"bytes": "!!!!"}),
        b"\x00" + struct.pack(">II", 1 << 30, 0) + struct.pack(">I", zlib.crc32(struct.pack(">II", 1 << 30, 0))) + b"\0" * 8]):
    put("evstream", "%02d" % i, b)


# ---- gitindex: a .git/index (git-made ones: versions 2, 3, 4, SHA-256, sparse, split, by hand) ----
def gientry(path, mode=0o100644, ext=None):
    e = b"\0" * 24 + struct.pack(">I", mode) + b"\0" * 12 + bytes(20)
    e += struct.pack(">H", min(len(path), 0xfff) | (0x4000 if ext is not None else 0))
    if ext is not None:
        e += struct.pack(">H", ext)
    e += path
    return e + b"\0" * (8 - len(e) % 8)


def giindex(entries, ver=2, exts=b""):
    import hashlib
    body = b"DIRC" + struct.pack(">II", ver, len(entries)) + b"".join(entries) + exts
    return body + hashlib.sha1(body).digest()


put("gitindex", "short40-sha256", b"DIRC" + struct.pack(">II", 2, 1) + b"\0" * 28)  # 32-byte ids cut the header
put("gitindex", "crafted-v2", giindex([gientry(b"a"), gientry(b"b/c")]))
put("gitindex", "crafted-v3-ext", giindex([gientry(b"a", ext=0x2000)], 3))
put("gitindex", "crafted-sparse-dir", giindex([gientry(b"c/", 0o40000, 0x4000), gientry(b"top")], 3, b"sdir\0\0\0\0"))
put("gitindex", "crafted-link", giindex([gientry(b"")], 2, b"link" + struct.pack(">I", 20) + bytes(20)))
put("gitindex", "count-huge", b"DIRC" + struct.pack(">II", 2, 0xffffffff) + bytes(60))

# ---- linediff: CONTEXT MAXEDITS A \0 B ----
for name, b in [("change", b"\x03\x3fa\nb\nc\nd\ne\0a\nB\nc\nd\ne\nf"), ("nonl-end", b"\x03\x3fa\nb\0a\nb\n"),
                ("over-edits", b"\x01\x02x\ny\nz\0p\nq\nr\n"), ("empty-a", b"\x02\x3f\0\n\n\n"),
                ("empty-b", b"\x02\x3f\n\n\n\0"), ("backslash", b"\x00\x3fa\r\nb\n\\ x\n\0a\r\nc\n\\ x")]:
    put("linediff", name, b)

# ---- jsonb: a JSON text (keys given twice, case folded, at depth) ----
for name, b in [("ascii-case", b'{"path":"a","PATH":"b"}'), ("long-s", b'{"\xc5\xbfrc":1,"src":2}'),
                ("kelvin", b'{"\xe2\x84\xaaey":1,"key":2}'), ("deep", b'{"a":[{"x":{"b":1,"B":2}}]}'),
                ("escape", b'{"a":1,"\\u0061":2}'), ("nul", b'{"a\\u0000b":1,"a":2}'),
                ("no-repeat", b'{"a":{"a":1},"b":[{"a":1},{"a":2}]}'), ("cut-utf8", b'{"\xc5":1,"\xc5\xbf":2,"\xe2\x84":3}')]:
    put("jsonb", name, b)
