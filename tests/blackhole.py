"""blackhole: a loopback TCP port that never answers a connection: its listen queue is full, so
the kernel drops further SYNs and a client's connect waits until its own timeout.
Usage: python3 blackhole.py PORTFILE [SECONDS]  (writes the port to PORTFILE, then holds it)"""
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(0)
port = s.getsockname()[1]
held = []
for _ in range(8):
    c = socket.socket(); c.setblocking(False)
    try: c.connect(("127.0.0.1", port))
    except BlockingIOError: pass
    held.append(c)
time.sleep(0.2)
open(sys.argv[1], "w").write(str(port))
time.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 60)
