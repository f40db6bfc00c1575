#!/usr/bin/env bash
# sbxreap: nightshift waits for its sandbox helpers before it exits, so that wait4 and
# /usr/bin/time count all they cost. Run under a subreaper: a helper left unreaped when
# nightshift exits is handed to it, and it says so. doctor runs one step in a namespace
# sandbox and closes it; a manifest's run does as many as its steps.
. "$(dirname "$0")/lib.sh"
cd "$T"
needuserns sbxreap
cat >reaper.py <<'PY'
import ctypes, os, subprocess, sys
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=open("err", "w"))
left = 0
while True:
    try:
        pid, _ = os.waitpid(-1, 0)  # blocks only while some orphan is still ours
    except ChildProcessError:
        break
    left += 1
print(rc, left)
PY
read -r rc left < <(python3 reaper.py "$NS" doctor)
expect_eq "doctor ran its step" 0 "$rc"
[ "$rc" = 0 ] || cat err
expect_eq "doctor: no helper left for a subreaper" 0 "$left"
read -r rc left < <(NIGHTSHIFT_SANDBOX_COLD=1 python3 reaper.py "$NS" doctor)
expect_eq "doctor, cold sandbox: ran its step" 0 "$rc"
expect_eq "doctor, cold sandbox: no helper left for a subreaper" 0 "$left"
done_tests
