#!/usr/bin/env python3
"""Check an event log's hash chain: seq from 0, prev = SHA-256 of the previous line.
usage: chain.py EVENTS.jsonl  (already decompressed); prints the head digest."""
import hashlib, json, sys
prev = "0" * 64
n = 0
for raw in open(sys.argv[1], "rb").read().split(b"\n")[:-1]:
    ev = json.loads(raw)
    assert ev["seq"] == n, f"line {n+1}: seq {ev['seq']}"
    assert ev["prev"] == prev, f"line {n+1}: prev does not match the line before"
    assert "time" in ev and "type" in ev, f"line {n+1}: no time/type"
    prev = hashlib.sha256(raw).hexdigest()
    n += 1
assert n > 0, "empty log"
print(prev)
