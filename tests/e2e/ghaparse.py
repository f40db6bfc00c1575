#!/usr/bin/env python3
"""Read what a GitHub Actions step leaves, the way GitHub reads it.

  ghaparse.py outputs FILE   the $GITHUB_OUTPUT file as a JSON object, by the documented syntax:
                             `name=value`, or `name<<DELIMITER`, the value's lines, `DELIMITER`
  ghaparse.py commands LOG   every line of a step's log the runner would take as a workflow command,
                             as JSON lines {"command", "properties", "data"}: a line that starts with
                             "::" once leading whitespace is trimmed and holds a second "::" (v2), or
                             one holding "##[" with a "]" after it (v1). Lines split at CR, LF, CRLF.
Exits 1 on a malformed output file.
"""
import json
import re
import sys

# What .NET's String.TrimStart() removes: char.IsWhiteSpace.
WS = "\t\n\v\f\r \x85\xa0\u1680" + "".join(chr(c) for c in range(0x2000, 0x200B)) + "\u2028\u2029\u202f\u205f\u3000"


def outputs(path):
    text = open(path, encoding="utf-8", newline="").read()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out, i = {}, 0
    while i < len(lines):
        line = lines[i]
        eq, hd = line.find("="), line.find("<<")
        if eq >= 0 and (hd < 0 or eq < hd):
            out[line[:eq]] = line[eq + 1:]
            i += 1
            continue
        if hd <= 0:
            sys.exit(f"line {i + 1}: neither name=value nor name<<DELIMITER: {line!r}")
        name, delim = line[:hd], line[hd + 2:]
        if not delim:
            sys.exit(f"line {i + 1}: empty delimiter")
        try:
            end = lines.index(delim, i + 1)
        except ValueError:
            sys.exit(f"line {i + 1}: delimiter {delim!r} never closes")
        out[name] = "\n".join(lines[i + 1:end])
        i = end + 1
    return out


def unescape(s, prop):
    pairs = [("%0D", "\r"), ("%0A", "\n")] + ([("%3A", ":"), ("%2C", ",")] if prop else []) + [("%25", "%")]
    for a, b in pairs:
        s = s.replace(a, b)
    return s


def commands(path):
    raw = open(path, "rb").read().decode("utf-8", "replace")
    for line in re.split(r"\r\n|\r|\n", raw):
        t = line.lstrip(WS)
        if t.startswith("::"):
            end = t.find("::", 2)
            if end >= 0:
                info = t[2:end]
                name, _, props = info.partition(" ")
                p = {}
                for kv in filter(None, props.strip().split(",")):
                    k, _, v = kv.partition("=")
                    p[k] = unescape(v, True)
                yield {"command": name, "properties": p, "data": unescape(t[end + 2:], False), "v": 2}
                continue
        at = line.find("##[")
        if at >= 0 and line.find("]", at) >= 0:
            rb = line.find("]", at)
            yield {"command": line[at + 3:rb].split(" ")[0], "properties": {}, "data": line[rb + 1:], "v": 1}


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("outputs", "commands"):
        sys.exit(__doc__)
    if sys.argv[1] == "outputs":
        print(json.dumps(outputs(sys.argv[2])))
    else:
        for c in commands(sys.argv[2]):
            print(json.dumps(c))
