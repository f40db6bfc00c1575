#!/usr/bin/env python3
"""A tiny "internet" on loopback addresses for the egress tests and bench.

Usage: internet.py PORTFILE LOGFILE [BIGMB]
Serves HTTP on 127.0.0.2 (two ports), 127.0.0.3 and [::1] (port 0 each, i.e. free ones),
and UDP on 127.0.0.2. Every request and datagram is appended to LOGFILE as
"ADDR:PORT PATH" (or "udp ADDR:PORT BYTES"), so a test can show what reached it.
GET /big answers BIGMB MiB (default 1). PORTFILE gets "a b c v6 udp" when all listen.
"""
import os
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

portfile, logfile = sys.argv[1], sys.argv[2]
big = int(sys.argv[3]) if len(sys.argv) > 3 else 1
lock = threading.Lock()
CHUNK = b"x" * (1 << 20)


def log(line):
    with lock, open(logfile, "a") as f:
        f.write(line + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        host, port = self.server.server_address[:2]
        log("%s:%d %s" % (host, port, self.path))
        if self.path == "/big":
            self.send_response(200)
            self.send_header("Content-Length", str(big << 20))
            self.end_headers()
            for _ in range(big):
                self.wfile.write(CHUNK)
            return
        body = ("hello from %s:%d %s\n" % (host, port, self.path)).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


class Server6(ThreadingHTTPServer):
    address_family = socket.AF_INET6


servers = [ThreadingHTTPServer(("127.0.0.2", 0), Handler), ThreadingHTTPServer(("127.0.0.3", 0), Handler),
           ThreadingHTTPServer(("127.0.0.2", 0), Handler)]
try:
    servers.append(Server6(("::1", 0), Handler))
except OSError:
    pass
for s in servers:
    s.daemon_threads = True
    threading.Thread(target=s.serve_forever, daemon=True).start()
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind(("127.0.0.2", 0))


def udploop():
    while True:
        data, peer = udp.recvfrom(65536)
        log("udp 127.0.0.2:%d %d" % (udp.getsockname()[1], len(data)))


threading.Thread(target=udploop, daemon=True).start()
ports = [s.server_address[1] for s in servers[:3]]
ports.append(servers[3].server_address[1] if len(servers) > 3 else 0)
ports.append(udp.getsockname()[1])
with open(portfile + ".tmp", "w") as f:
    f.write(" ".join(map(str, ports)) + "\n")
os.rename(portfile + ".tmp", portfile)
threading.Event().wait()
