#!/usr/bin/env python3
"""Table of broken manifests: each must make `nightshift validate` exit 2 with
FILE:LINE:COL: MESSAGE, where "^" in the case text marks the exact spot (it is removed
before writing the file). Prints "N passed, N failed"."""
import os, re, subprocess, sys, tempfile

NS = os.environ["NIGHTSHIFT"]
M = "models:\n  d: { provider: scripted, replies: [ {text: hi} ] }\n"
W = "workers:\n  w:\n    instructions: x\n    model: d\n"
J = "jobs:\n  j: { worker: w }\n"

cases = [
    ("bad YAML", "version: 1\nmodels:\n  a: [1, 2\n^", "YAML syntax error"),
    ("tab indent", "version: 1\nmodels:\n^\td: x\n", "YAML syntax error"),
    ("unknown top key", "version: 1\n^modles: {}\n", "unknown key 'modles' in the manifest; did you mean 'models'"),
    ("version 2", "version: ^2\n" + M + W + J, "version 2 is not known: this nightshift reads manifests of version 1"),
    ("missing version", "^models: {}\n", "missing 'version: 1'"),
    ("models a list", "version: 1\nmodels: ^[a]\n", "models must be a mapping"),
    ("unknown provider", "version: 1\nmodels:\n  d: { provider: ^opnai, model: x }\n" + W + J, "did you mean 'openai'"),
    ("no provider", "version: 1\nmodels:\n  d: ^{ model: x }\n" + W + J, "needs a provider"),
    ("openai without model", "version: 1\nmodels:\n  d: ^{ provider: openai }\n" + W + J, "needs a model name"),
    ("scripted without replies", "version: 1\nmodels:\n  d: ^{ provider: scripted }\n" + W + J, "exactly one of replies or script"),
    ("reply without text", "version: 1\nmodels:\n  d: { provider: scripted, replies: [ ^{} ] }\n" + W + J, "needs text or tool_calls"),
    ("tool_calls not a list", "version: 1\nmodels:\n  d: { provider: scripted, replies: [ {tool_calls: ^x} ] }\n" + W + J, "tool_calls must be a list"),
    ("arguments not a mapping", "version: 1\nmodels:\n  d: { provider: scripted, replies: [ {tool_calls: [ {name: shell, arguments: ^[1]} ]} ] }\n" + W + J, "arguments must be a mapping"),
    ("script file missing", "version: 1\nmodels:\n  d: { provider: scripted, script: ^nope.yaml }\n" + W + J, "cannot read script"),
    ("temperature out of range", "version: 1\nmodels:\n  d: { provider: openai, model: x, temperature: ^3 }\n" + W + J, "out of range"),
    ("bad duration", "version: 1\nmodels:\n  d: { provider: openai, model: x, timeout: ^10 minutes }\n" + W + J, "expected a duration"),
    ("negative retries", "version: 1\nmodels:\n  d: { provider: openai, model: x, retries: ^-1 }\n" + W + J, "out of range"),
    ("unknown worker key", "version: 1\n" + M + "workers:\n  w:\n    ^instruction: x\n" + J, "did you mean 'instructions'"),
    ("no instructions", "version: 1\n" + M + "workers:\n  w: ^{ model: d }\n" + J, "has no instructions"),
    ("unknown tool", "version: 1\n" + M + W + "    tools: [shell, ^shel]\n" + J, "unknown tool 'shel'; did you mean 'shell'"),
    ("context not a mapping", "version: 1\n" + M + W + "    context: ^elide\n" + J, "context must be a mapping"),
    ("unknown compact", "version: 1\n" + M + W + "    context: { compact: ^squash }\n" + J, "unknown compact 'squash' (one of: elide, summarize)"),
    ("context key typo", "version: 1\n" + M + W + "    context: { ^compat: elide }\n" + J, "did you mean 'compact'"),
    ("tools not a list", "version: 1\n" + M + W + "    tools: ^shell\n" + J, "tools must be a list"),
    ("bad default", "version: 1\n" + M + W + "    approval: { default: ^maybe }\n" + J, "unknown decision 'maybe'"),
    ("rule without decision", "version: 1\n" + M + W + "    approval:\n      rules:\n        - ^{ tool: shell }\n" + J, "needs a decision"),
    ("rule unknown key", "version: 1\n" + M + W + "    approval:\n      rules:\n        - { ^cmd: ls, decision: allow }\n" + J, "unknown key 'cmd'"),
    ("rules not a list", "version: 1\n" + M + W + "    approval: { rules: ^{} }\n" + J, "rules must be a list"),
    ("example decided otherwise", "version: 1\n" + M + W + "    approval:\n      rules: [ { tool: shell, command: \"ls *\", decision: allow } ]\n      examples: { allow: [^\"rm -rf /\"] }\n" + J, "example \"rm -rf /\" is listed under allow but the default decides deny"),
    ("schema keyword typo", "version: 1\n" + M + W + "    output:\n      type: object\n      properties:\n        a: { type: string, ^patern: x }\n" + J, "patern"),
    ("output not a mapping", "version: 1\n" + M + W + "    output: ^string\n" + J, "output must be a JSON Schema mapping"),
    ("max_turns a word", "version: 1\n" + M + W + "    max_turns: ^many\n" + J, "expected an integer"),
    ("max_turns zero", "version: 1\n" + M + W + "    max_turns: ^0\n" + J, "out of range"),
    ("unknown model", "version: 1\n" + M + "workers:\n  w: ^{ instructions: x, model: gpt }\n" + J, "uses model 'gpt', which is not in models"),
    ("unknown delegate", "version: 1\n" + M + "workers:\n  w: { instructions: x, model: d, delegates: [^v] }\n" + J, "delegates to unknown worker 'v'"),
    ("delegation cycle", "version: 1\n" + M + "workers:\n  a: { instructions: x, model: d, delegates: [b] }\n  b: { instructions: x, model: d, delegates: [^a] }\n" + "jobs:\n  j: { worker: a }\n", "cycle in delegates: a -> b -> a"),
    ("unknown job worker", "version: 1\n" + M + W + "jobs:\n  j: { worker: ^wk }\n", "unknown worker 'wk'; did you mean 'w'"),
    ("job without worker", "version: 1\n" + M + W + "jobs:\n  j: ^{ input: x }\n", "needs a worker"),
    ("unknown need", "version: 1\n" + M + W + "jobs:\n  j: { worker: w, needs: [^k] }\n", "needs unknown job 'k'"),
    ("needs cycle", "version: 1\n" + M + W + "jobs:\n  a: { worker: w, needs: [b] }\n  b: { worker: w, needs: [^a] }\n", "cycle in needs: a -> b -> a"),
    ("duplicate job", "version: 1\n" + M + W + "jobs:\n  j: { worker: w }\n  ^j: { worker: w }\n", "duplicate key 'j'"),
    ("bad job name", "version: 1\n" + M + W + "jobs:\n  ^j/x: { worker: w }\n", "may hold only letters"),
    ("unknown backend", "version: 1\n" + M + "sandbox: { backend: ^dockr }\n" + W + J, "did you mean 'docker'"),
    ("bad memory", "version: 1\n" + M + "sandbox: { memory: ^lots }\n" + W + J, "expected a size"),
    ("sandbox.uid a word", "version: 1\n" + M + "sandbox: { uid: ^runner }\n" + W + J, "sandbox.uid: 'runner' is not a uid or uid:gid"),
    ("sandbox.uid root", "version: 1\n" + M + "sandbox: { uid: ^0 }\n" + W + J, "steps never run as root"),
    ("sandbox.uid root group", "version: 1\n" + M + "sandbox: { uid: ^\"1001:0\" }\n" + W + J, "steps never run as root"),
    ("sandbox.uid nobody", "version: 1\n" + M + "sandbox: { uid: ^65534 }\n" + W + J, "out of range"),
    ("sandbox.uid negative", "version: 1\n" + M + "sandbox: { uid: ^-1 }\n" + W + J, "is not a uid or uid:gid"),
    ("sandbox.uid in a job", "version: 1\n" + M + W + "jobs:\n  j: { worker: w, sandbox: { uid: ^\"1001:\" } }\n", "is not a uid or uid:gid"),
    ("bad network", "version: 1\n" + M + "sandbox: { network: ^bridge }\n" + W + J, "unknown network 'bridge'"),
    ("mount source missing", "version: 1\n" + M + "sandbox:\n  mounts:\n    - { source: ^./nothing-here, target: /data }\n" + W + J, "does not exist"),
    ("mount target relative", "version: 1\n" + M + "sandbox:\n  mounts:\n    - { source: ., target: ^data }\n" + W + J, "a mount's target must be an absolute path"),
    ("workspace missing", "version: 1\nworkspace: ^no-such-dir\n" + M + W + J, "does not exist"),
    ("snapshot level", "version: 1\n" + M + "snapshot: { level: ^30 }\n" + W + J, "out of range"),
    ("secrets a mapping", "version: 1\n" + M + "secrets: ^{ a: b }\n" + W + J, "expected a list of strings"),
    ("expr job not in needs", "version: 1\n" + M + W + "jobs:\n  a: { worker: w }\n  b: { worker: w, input: ^\"${{ jobs.a.output.x }}\" }\n", "job 'a', which is not in this job's needs"),
    ("expr unknown input", "version: 1\n" + M + W + "jobs:\n  j: { worker: w, input: ^\"${{ inputs.day }}\" }\n", "input 'day' is not set"),
    ("expr unset env", "version: 1\n" + M + W + "jobs:\n  j: { worker: w, input: ^\"${{ env.NIGHTSHIFT_SURELY_UNSET }}\" }\n", "NIGHTSHIFT_SURELY_UNSET is not set"),
    ("expr bad root", "version: 1\n" + M + W + "jobs:\n  j: { worker: w, input: ^\"${{ secrets.x }}\" }\n", "unknown expression root 'secrets'"),
    ("worker file missing", "version: 1\n" + M + "workers:\n  w: { file: ^workers/none.md }\n" + J, "cannot read worker file"),
    ("continue_on_error yes", "version: 1\n" + M + W + "jobs:\n  j: { worker: w, continue_on_error: ^yes }\n", "expected true or false"),
    ("empty manifest", "^", "the manifest is empty"),
    ("second document", "version: 1\n" + M + W + J + "---\n^a: 1\n", "a second YAML document"),
    ("rule for a tool the worker lacks", "version: 1\n" + M + W + "    tools: [shell]\n    approval:\n      rules:\n        - ^{ tool: read_fil, decision: deny }\n" + J, "tool 'read_fil' matches no tool that worker 'w' has"),
    ("files outside workspace", "version: 1\n" + M + W + "jobs:\n  j: { worker: w, files: ^[../etc/passwd] }\n", "is not a path inside the workspace"),
]

# A worker file whose front matter has a mistake: the position is in the worker file.
wfile = "---\ndescription: d\n^tols: [shell]\n---\nBe brief.\n"

passed = failed = 0
with tempfile.TemporaryDirectory() as d:
    os.makedirs(os.path.join(d, "workers"))
    def run(name, text, want, fname="m.yaml", main=None):
        global passed, failed
        idx = text.index("^")
        line = text.count("\n", 0, idx) + 1
        col = idx - (text.rfind("\n", 0, idx) + 1) + 1
        body = text.replace("^", "", 1)
        path = os.path.join(d, fname)
        open(path, "w").write(body)
        target = main or path
        p = subprocess.run([NS, "validate", target], capture_output=True, text=True)
        loc = f"{path}:{line}:{col}: "
        good = p.returncode == 2 and loc in p.stderr and re.search(re.escape(want), p.stderr)
        if good:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {name}: exit {p.returncode}, want 2 and '{loc}...{want}'\n  got: {p.stderr.strip()}")
    for name, text, want in cases:
        run(name, text, want)
    # Several mistakes in one file: every one reported at its own spot, in order, then a count.
    def runmany(name, text, wants):
        global passed, failed
        spots, body, i = [], "", 0
        for part in text.split("^"):
            body += part
            spots.append((body.count("\n") + 1, len(body) - (body.rfind("\n") + 1) + 1))
        spots.pop()
        path = os.path.join(d, "many.yaml")
        open(path, "w").write(body)
        p = subprocess.run([NS, "validate", path], capture_output=True, text=True)
        lines = [l for l in p.stderr.splitlines() if re.match(re.escape("nightshift: " + path) + r":\d+:\d+: ", l)]
        got = [(l, w) for l, w in zip(lines, wants)]
        good = p.returncode == 2 and len(lines) == len(wants) == len(spots) and \
            f"{path}: {len(wants)} mistakes" in p.stderr
        for (line, col), (l, w) in zip(spots, got):
            good = good and l.startswith(f"nightshift: {path}:{line}:{col}: ") and w in l
        if good:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {name}: exit {p.returncode}, want {len(wants)} mistakes at {spots}\n  got: {p.stderr.strip()}")
    many = [
        ("typos everywhere", "version: 1\n^modls: {}\nmodels:\n  d: { provider: scripted, replies: [ {text: hi} ], ^tempreature: 1 }\n"
         "workers:\n  w:\n    instructions: x\n    model: d\n    tools: [shell, ^read_fil]\n    delegates: [^ghost]\n"
         "jobs:\n  a: { worker: w, needs: [b, ^nojob] }\n  b: { worker: w, retries: ^lots }\n  c: { worker: ^nobody }\n",
         ["did you mean 'models'", "did you mean 'temperature'", "did you mean 'read_file'",
          "delegates to unknown worker 'ghost'", "needs unknown job 'nojob'", "expected an integer", "unknown worker 'nobody'"]),
        ("rules and examples", "version: 1\n" + M + W + "    tools: [shell]\n    approval:\n      rules:\n"
         "        - ^{ tool: read_fil, decision: deny }\n        - { tool: shell, command: \"ls *\", decision: allow }\n"
         "      examples: { allow: [^\"rm -rf /\"] }\n" + J,
         ["matches no tool", "example \"rm -rf /\" is listed under allow"]),
        ("sandbox and snapshot", "version: 1\n" + M + "sandbox: { backend: ^dockr, memory: ^lots }\nsnapshot: { level: ^30 }\n" + W + J,
         ["did you mean 'docker'", "expected a size", "out of range"]),
    ]
    for name, text, wants in many:
        runmany(name, text, wants)
    main = os.path.join(d, "main.yaml")
    open(main, "w").write("version: 1\n" + M + "workers:\n  w: { file: workers/w.md, model: d }\n" + J)
    run("worker file front matter", wfile, "unknown key 'tols'", fname="workers/w.md", main=main)
print(f"{len(cases) + 1 + len(many)} cases")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
