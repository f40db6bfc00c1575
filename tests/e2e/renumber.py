#!/usr/bin/env python3
"""renumber.py RUN OFFSET: move every step of an unsigned run OFFSET later, as if the run had made
OFFSET steps before its first: the steps of job events, the layers' names (snapshots/NNNN.tar.zst,
at least four digits) and the events that name them; then the hash chains, run.json's heads and
SHA256SUMS are made again, so that the run verifies. For tests of step numbers past 9999."""
import hashlib, json, os, subprocess, sys

run, off = sys.argv[1], int(sys.argv[2])


def layer(n):
    return "%04d.tar.zst" % n


def rechain(lines):
    prev, out = "0" * 64, []
    for i, e in enumerate(lines):
        e["seq"], e["prev"] = i, prev
        raw = json.dumps(e, separators=(",", ":")).encode()
        out.append(raw)
        prev = hashlib.sha256(raw).hexdigest()
    return b"".join(r + b"\n" for r in out), prev


def readlog(path):
    data = subprocess.run(["zstd", "-dcq", path], check=True, capture_output=True).stdout
    return [json.loads(l) for l in data.split(b"\n") if l]


def writelog(path, lines):
    data, head = rechain(lines)
    subprocess.run(["zstd", "-qf", "-o", path], input=data, check=True)
    return head


def moved(name):  # snapshots/[WS/]NNNN.tar.zst -> the same, NNNN + off
    d, b = os.path.split(name)
    if b.endswith(".tar.zst") and b[:-8].isdigit():
        return os.path.join(d, layer(int(b[:-8]) + off))
    return name


rj = json.load(open(os.path.join(run, "run.json")))
for job in rj["jobs"]:
    p = os.path.join(run, "jobs", job, "events.jsonl.zst")
    lines = readlog(p)
    for e in lines:
        if isinstance(e.get("step"), int):
            e["step"] += off
        if isinstance(e.get("layer"), str):
            e["layer"] = moved(e["layer"])
    rj["jobs"][job]["events_head"] = writelog(p, lines)
snaps = os.path.join(run, "snapshots")
for d, _, files in os.walk(snaps):
    for f in sorted(files, reverse=True):
        new = moved(f)
        if new != f:
            os.rename(os.path.join(d, f), os.path.join(d, new))
top = os.path.join(run, "events.jsonl.zst")
lines = readlog(top)
for e in lines:
    if e.get("type") == "run":
        for job in rj["jobs"]:
            e["jobs"][job]["events_head"] = rj["jobs"][job]["events_head"]
rj["events_head"] = writelog(top, lines)
with open(os.path.join(run, "run.json"), "w") as f:
    json.dump(rj, f, indent="\t")
sums = []
for l in open(os.path.join(run, "SHA256SUMS")):
    name = moved(l.rstrip("\n").split("  ", 1)[1])
    sums.append("%s  %s\n" % (hashlib.sha256(open(os.path.join(run, name), "rb").read()).hexdigest(), name))
open(os.path.join(run, "SHA256SUMS"), "w").write("".join(sums))
