#!/usr/bin/env python3
"""A stand-in Docker engine for the tests: a proxy on a unix socket in front of a real engine
that behaves as a newer (or differently built) engine does.

  dockerstandin.py LISTEN UPSTREAM --api 1.52 --min 1.44 [--warn memory,pids] [--log FILE]
                   [--tcp PORTFILE --tls CERT,KEY,CA]

LISTEN is a unix socket path, or with --tcp ignored: it listens on 127.0.0.1 at a free port written
to PORTFILE, over TLS with --tls (a client certificate signed by CA is required, as dockerd
--tlsverify requires).

- Versioned paths are checked as moby's daemon checks them (api/server/middleware/version.go):
  a version below --min is answered 400 "client version X is too old. Minimum supported API
  version is MIN, ...", one above --api 400 "client version X is too new. Maximum supported API
  version is API". Accepted requests go to the real engine below its own version (1.41 for
  Debian's 20.10), so the containers are real.
- GET /version and /_ping (unversioned) answer as the newer engine: ApiVersion --api,
  MinAPIVersion --min (moby's types.Version fields).
- --warn: POST /containers/create answers with the Warnings a daemon gives when it cannot enforce
  those limits (moby daemon/daemon_unix.go verifyPlatformContainerResources) - the container
  is still made, without the limit, as such a daemon does.
Each request line is logged with what was done with it: "ok", "too-old", "too-new".
Hijacked connections (attach, exec start: Upgrade: tcp) are spliced both ways.
"""
import argparse, json, os, re, socket, socketserver, ssl, sys, threading

P = argparse.ArgumentParser()
P.add_argument("listen")
P.add_argument("upstream")
P.add_argument("--api", default="1.52")
P.add_argument("--min", default="1.44")
P.add_argument("--upstream-api", default="1.41")
P.add_argument("--warn", default="")
P.add_argument("--log", default=None)
P.add_argument("--tcp", default=None)
P.add_argument("--tls", default=None)
A = P.parse_args()
LOCK = threading.Lock()

WARNINGS = {
    "memory": "Your kernel does not support memory limit capabilities or the cgroup is not mounted. "
              "Limitation discarded.",
    "swap": "Your kernel does not support swap limit capabilities or the cgroup is not mounted. "
            "Memory limited without swap.",
    "pids": "Your kernel does not support pids limit capabilities or the cgroup is not mounted. "
            "PIDs limit discarded.",
    "cpu": "Your kernel does not support CPU CFS scheduler or the cgroup is not mounted. NanoCPUs discarded.",
}
WARN = [w for w in A.warn.split(",") if w]


def ver(s):
    a, b = s.split(".")
    return (int(a), int(b))


def log(line):
    if A.log:
        with LOCK, open(A.log, "a") as f:
            f.write(line + "\n")


def readhead(sock, buf):
    while b"\r\n\r\n" not in buf:
        d = sock.recv(65536)
        if not d:
            return None, buf
        buf += d
    i = buf.index(b"\r\n\r\n") + 4
    return buf[:i], buf[i:]


def answer(sock, status, reason, body, ctype="application/json", extra=""):
    if not isinstance(body, bytes):
        body = json.dumps(body).encode()
    sock.sendall(("HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nApi-Version: %s\r\n%s"
                  "Connection: close\r\n\r\n" % (status, reason, ctype, len(body), A.api, extra)).encode() + body)


def pump(src, dst, done):
    try:
        while True:
            d = src.recv(65536)
            if not d:
                break
            dst.sendall(d)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    done.set()


def dechunk(b):
    out = b""
    while True:
        i = b.index(b"\r\n")
        n = int(b[:i].split(b";")[0], 16)
        if n == 0:
            return out
        out += b[i + 2:i + 2 + n]
        b = b[i + 2 + n + 2:]


class H(socketserver.BaseRequestHandler):
    def handle(self):
        c = self.request
        if TLS:
            try:
                c = TLS.wrap_socket(c, server_side=True)
            except (OSError, ssl.SSLError) as e:
                log("TLS handshake refused: %s" % e)
                return
        head, rest = readhead(c, b"")
        if head is None:
            return
        lines = head.decode("latin-1").split("\r\n")
        method, target, proto = lines[0].split(" ", 2)
        hdrs = {l.split(":", 1)[0].strip().lower(): l.split(":", 1)[1].strip() for l in lines[1:] if ":" in l}
        m = re.match(r"^/v(\d+\.\d+)(/.*)$", target)
        if not m:
            if target.startswith("/_ping"):
                log("%s %s ok" % (method, target))
                return answer(c, 200, "OK", b"OK", "text/plain")
            if target.startswith("/version"):
                log("%s %s ok" % (method, target))
                return answer(c, 200, "OK", {"Version": "29.0.0-standin", "ApiVersion": A.api,
                                             "MinAPIVersion": A.min, "Os": "linux", "Arch": "amd64",
                                             "Components": [{"Name": "Engine", "Version": "29.0.0-standin"}]})
            log("%s %s unversioned" % (method, target))
            return answer(c, 400, "Bad Request", {"message": "the stand-in serves versioned paths only"})
        v, path = m.group(1), m.group(2)
        if ver(v) < ver(A.min):
            log("%s %s too-old" % (method, target))
            return answer(c, 400, "Bad Request", {"message": "client version %s is too old. Minimum supported API "
                                                  "version is %s, please upgrade your client to a newer version"
                                                  % (v, A.min)})
        if ver(v) > ver(A.api):
            log("%s %s too-new" % (method, target))
            return answer(c, 400, "Bad Request", {"message": "client version %s is too new. Maximum supported API "
                                                  "version is %s" % (v, A.api)})
        log("%s %s ok" % (method, target))
        upgrade = "upgrade" in hdrs
        out = ["%s /v%s%s %s" % (method, A.upstream_api, path, proto)]
        for l in lines[1:]:
            if l and l.split(":", 1)[0].strip().lower() != "connection":
                out.append(l)
        out.append("Connection: Upgrade" if upgrade else "Connection: close")
        create = method == "POST" and path.startswith("/containers/create") and WARN
        if create:  # the daemon drops what it cannot enforce, and says so
            n = int(hdrs.get("content-length", "0"))
            while len(rest) < n:
                d = c.recv(65536)
                if not d:
                    break
                rest += d
            j = json.loads(rest[:n] or b"{}")
            hc = j.get("HostConfig") or {}
            for w, keys in {"memory": ["Memory", "MemorySwap"], "swap": ["MemorySwap"], "pids": ["PidsLimit"],
                            "cpu": ["NanoCpus"]}.items():
                if w in WARN:
                    for k in keys:
                        hc.pop(k, None)
            rest = json.dumps(j).encode()
            out = [l for l in out if not l.lower().startswith("content-length:")]
            out.insert(-1, "Content-Length: %d" % len(rest))
        u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        u.connect(A.upstream)
        u.sendall(("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + rest)
        if create:
            resp = b""
            while True:
                d = u.recv(65536)
                if not d:
                    break
                resp += d
            rh, body = resp.split(b"\r\n\r\n", 1)
            rl = rh.decode("latin-1").split("\r\n")
            if "transfer-encoding: chunked" in rh.decode("latin-1").lower():
                body = dechunk(body)
            status = int(rl[0].split(" ")[1])
            if status == 201:
                j = json.loads(body)
                j["Warnings"] = (j.get("Warnings") or []) + [WARNINGS[w] for w in WARN]
                body = json.dumps(j).encode()
            answer(c, status, rl[0].split(" ", 2)[2], body)
            u.close()
            return
        done = threading.Event()
        t = threading.Thread(target=pump, args=(c, u, done), daemon=True)
        t.start()
        pump(u, c, threading.Event())
        # the engine ended its side: the client's may stay open (nothing more goes anywhere)
        u.close()


class S(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True


TLS = None
if A.tls:
    cert, key, ca = A.tls.split(",")
    TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    TLS.load_cert_chain(cert, key)
    TLS.load_verify_locations(ca)
    TLS.verify_mode = ssl.CERT_REQUIRED
    # The docker CLI, and nightshift, end a hijacked stream's stdin with a TCP half-close under TLS
    # (no close_notify); dockerd reads it as the end of the input, and so must this.
    TLS.options |= ssl.OP_IGNORE_UNEXPECTED_EOF


class T(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


if A.tcp:
    srv = T(("127.0.0.1", 0), H)
    with open(A.tcp + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(A.tcp + ".tmp", A.tcp)
else:
    if os.path.exists(A.listen):
        os.unlink(A.listen)
    srv = S(A.listen, H)
    os.chmod(A.listen, 0o660)
print("listening", flush=True)
srv.serve_forever()
