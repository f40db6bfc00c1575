#!/usr/bin/env python3
"""Generate a run directory with N events in one job (tool calls of every kind), hash-chained,
zstd-compressed, with output.json, the manifest, the run's own log, run.json and SHA256SUMS as the
runner writes them (so that audit --verify checks every claim), for the audit benchmark.
usage: genrun.py DIR N [OUT]   (OUT: bytes of each step's stdout, default 3)"""
import hashlib, io, json, os, subprocess, sys, tarfile

d, n = sys.argv[1], int(sys.argv[2])
outs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
log = "".join(f"line {i}: compiling src/module{i}.c ... ok\n" for i in range(outs // 30 + 1))[:max(outs - 3, 0)] + "ok\n"
os.makedirs(f"{d}/jobs/big", exist_ok=True)
os.makedirs(f"{d}/snapshots", exist_ok=True)
os.makedirs(f"{d}/manifest", exist_ok=True)
open(f"{d}/manifest/m.yaml", "w").write("version: 1\n")
msha = hashlib.sha256(open(f"{d}/manifest/m.yaml", "rb").read()).hexdigest()
prev = "0" * 64
zst = subprocess.Popen(["zstd", "-q", "-3", "-o", f"{d}/jobs/big/events.jsonl.zst"], stdin=subprocess.PIPE)
step = 0
seq = 0
kinds = ["decision", "tool_result", "model_request", "model_response"]
out = []
usage = {"input": 0, "output": 0, "cached": 0, "reasoning": 0}
result = {"verdict": "ok"}
while seq < n:
    k = kinds[seq % 4]
    ev = {"seq": seq, "time": "2026-11-22T02:00:00.000Z", "type": k, "prev": prev}
    if seq == 0:
        ev.update(type="job_start", job="big", worker="w", model="default", input="x",
                  manifest={"file": "m.yaml", "sha256": msha})
    elif seq == n - 2:
        ev.update(type="output", call_id="final", output=result)
    elif seq == n - 1:
        ev.update(type="job_end", status="succeeded", turns=n // 4, steps=step, usage=usage)
    elif k == "decision":
        step += 1
        ev.update(step=step, call_id=f"c{step}", tool="shell", arguments={"command": f"git diff HEAD~{step % 7}"},
                  commands=[f"git diff HEAD~{step % 7}"], decision="allow" if step % 5 else "deny",
                  rule=1 if step % 5 else "default", reason="rule 1 allows it")
    elif k == "tool_result":
        ev.update(step=step, call_id=f"c{step}", tool="shell", exit_code=0, duration_ms=3, stdout=log,
                  stdout_sha256="a" * 64, stderr="", stderr_sha256="b" * 64)
    elif k == "model_request":
        ev.update(turn=seq // 4, digest="c" * 64, messages=[{"role": "tool", "content": "ok"}])
    else:
        ev.update(turn=seq // 4, status=200, attempts=1, response={"choices": []}, finish="tool_calls",
                  usage={"input": 100, "output": 10, "cached": 0, "reasoning": 0})
        usage = {k: usage[k] + ev["usage"][k] for k in usage}  # job_end and run.json state the sum
    line = json.dumps(ev, separators=(",", ":")).encode()
    out.append(line + b"\n")
    prev = hashlib.sha256(line).hexdigest()
    seq += 1
    if len(out) >= 10000:
        zst.stdin.write(b"".join(out)); out = []
zst.stdin.write(b"".join(out))
zst.stdin.close(); zst.wait()
json.dump(result, open(f"{d}/jobs/big/output.json", "w"))
run = {"nightshift": "bench", "run_id": "bench", "manifest": {"file": "m.yaml", "sha256": msha},
       "started": "2026-11-22T02:00:00.000Z", "ended": "2026-11-22T02:00:00.000Z",
       "status": "succeeded", "jobs": {"big": {"status": "succeeded", "worker": "w", "turns": n // 4, "steps": step,
       "usage": usage, "events": n, "events_head": prev}}, "usage": usage}
# The run's own log: one run event holding run.json, whose head run.json then carries.
ev = {"seq": 0, "time": "2026-11-22T02:00:00.000Z", "type": "run", "prev": "0" * 64}
ev.update(run)
line = json.dumps(ev, separators=(",", ":")).encode()
subprocess.run(["zstd", "-q", "-o", f"{d}/events.jsonl.zst"], input=line + b"\n", check=True)
run.update(events=1, events_head=hashlib.sha256(line).hexdigest())
json.dump(run, open(f"{d}/run.json", "w"), indent=1)
# The end layer, as the runner stores the workspace after the last step: here an empty one.
tar = io.BytesIO()
tarfile.open(fileobj=tar, mode="w", format=tarfile.PAX_FORMAT).close()
subprocess.run(["zstd", "-q", "-o", f"{d}/snapshots/end.tar.zst"], input=tar.getvalue(), check=True)
files = sorted(["events.jsonl.zst", "jobs/big/events.jsonl.zst", "jobs/big/output.json", "manifest/m.yaml", "run.json",
                "snapshots/end.tar.zst"])
with open(f"{d}/SHA256SUMS", "w") as f:
    for p in files:
        f.write(hashlib.sha256(open(f"{d}/{p}", "rb").read()).hexdigest() + "  " + p + "\n")
