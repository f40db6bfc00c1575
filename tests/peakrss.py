#!/usr/bin/env python3
"""peakrss.py OUT CMD...: run CMD, write the peak resident size of CMD's own process (VmHWM, in
KiB; not its children's) to OUT, exit with CMD's status. Read from /proc every 20 ms: the
high-water mark only grows, so the last reading before the exit is the peak."""
import subprocess, sys, time

out, cmd = sys.argv[1], sys.argv[2:]
p = subprocess.Popen(cmd)
peak = 0
while p.poll() is None:
    try:
        for l in open("/proc/%d/status" % p.pid):
            if l.startswith("VmHWM:"):
                peak = max(peak, int(l.split()[1]))
    except (OSError, ValueError):
        pass
    time.sleep(0.02)
open(out, "w").write("%d\n" % peak)
sys.exit(p.returncode if p.returncode >= 0 else 128 - p.returncode)
