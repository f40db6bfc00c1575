#!/usr/bin/env python3
"""craft.py: write a hostile tar (pax format) to stdout from a spec on stdin, one entry a line:

  d PATH MODE [MTIME]    directory
  f PATH MODE [TEXT]     regular file (TEXT, or empty)
  z PATH SIZE            regular file of SIZE zero bytes, its data streamed (not held in memory)
  Z PATH SIZE            a header saying a regular file of SIZE bytes, then the tar ends (cut there)
  s PATH SIZE            sparse file (GNU sparse 1.0 in pax, as GNU tar and libarchive write it) of
                         SIZE bytes, holes but for 512 bytes of "x" at its start
  l PATH TARGET          symlink
  h PATH TARGET          hard link
  c PATH                 character device 1,3 (/dev/null's numbers)
  w PATH                 whiteout: an empty ".wh.NAME" carrying nightshift's whiteout attribute
  o PATH                 opaque whiteout (".wh..wh..opq" in PATH's folder, PATH names it whole)

Nothing is checked: names are written as given (absolute, with "..", anything)."""
import sys
import tarfile
import io


class Zeros(io.RawIOBase):
    def __init__(self, n):
        self.left = n

    def readable(self):
        return True

    def readinto(self, b):
        k = min(len(b), self.left)
        b[:k] = bytes(k)
        self.left -= k
        return k


def main():
    out = tarfile.open(fileobj=sys.stdout.buffer, mode="w|", format=tarfile.PAX_FORMAT)
    for line in sys.stdin:
        f = line.rstrip("\n").split(" ", 3)
        if not f or not f[0]:
            continue
        kind, path = f[0], f[1]
        ti = tarfile.TarInfo(path)
        ti.mtime = 1700000000
        data = None
        if kind == "d":
            ti.type = tarfile.DIRTYPE
            ti.mode = int(f[2], 8)
            if len(f) > 3:
                ti.mtime = int(f[3])
        elif kind == "f":
            ti.mode = int(f[2], 8)
            text = (f[3] if len(f) > 3 else "").encode()
            ti.size = len(text)
            data = io.BytesIO(text)
        elif kind == "z":
            ti.mode = 0o644
            ti.size = int(f[2])
            data = io.BufferedReader(Zeros(ti.size), 1 << 20)
        elif kind == "Z":
            ti.mode = 0o644
            ti.size = int(f[2])
            sys.stdout.buffer.write(ti.tobuf(tarfile.PAX_FORMAT))
            sys.stdout.buffer.flush()
            return
        elif kind == "s":
            # The map (offset 0, 512 bytes; then the end, 0 bytes) in a block of its own, then the data.
            ti.mode = 0o644
            ti.name = "GNUSparseFile.0/" + path.split("/")[-1]
            ti.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.name": path,
                              "GNU.sparse.realsize": f[2]}
            block = ("2\n0\n512\n%s\n0\n" % f[2]).encode().ljust(512, b"\0") + b"x" * 512
            ti.size = len(block)
            data = io.BytesIO(block)
        elif kind == "l":
            ti.type = tarfile.SYMTYPE
            ti.linkname = f[2]
            ti.mode = 0o777
        elif kind == "h":
            ti.type = tarfile.LNKTYPE
            ti.linkname = f[2]
            ti.mode = 0o644
        elif kind == "c":
            ti.type = tarfile.CHRTYPE
            ti.devmajor, ti.devminor = 1, 3
            ti.mode = 0o666
        elif kind in ("w", "o"):
            ti.mode = 0o644
            ti.pax_headers = {"SCHILY.xattr.nightshift.whiteout": "file" if kind == "w" else "opaque"}
        else:
            sys.exit("craft.py: unknown kind " + kind)
        out.addfile(ti, data)
    out.close()


main()
