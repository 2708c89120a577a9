#!/usr/bin/python3
"""Memory per idle HTTP/2 connection (a measurement, not a test: not run by
scripts/test.sh, which runs test_*.py only).

Starts `httpz serve --workers 1`, opens N connections (h2c with prior
knowledge, or h2 over TLS with HTTPZ_TRANSPORT=tls), on each sends the
preface, SETTINGS, the ACK of the server's SETTINGS and one GET, reads the
whole response, then leaves the connection open and idle. Prints the
worker's VmRSS before and after, and the difference per connection.

    HTTPZ_TRANSPORT=plain|tls HTTPZ_IO=epoll|uring /usr/bin/python3 test/e2e/h2_idle_memory.py [N]
"""

import os
import socket
import struct
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def frame(ty, flags, sid, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ty, flags]) + struct.pack(">I", sid) + payload


# HPACK, static table only: :method GET (2), :scheme http/https (6/7),
# :path / (4), :authority (literal with incremental indexing of name 1).
def get_block(tls):
    auth = b"127.0.0.1"
    return bytes([0x82, 0x87 if tls else 0x86, 0x84, 0x41, len(auth)]) + auth


def read_frames_until_end(sock):
    """Reads until a frame with END_STREAM on stream 1."""
    buf = b""
    while True:
        while len(buf) >= 9:
            n = int.from_bytes(buf[:3], "big")
            if len(buf) < 9 + n:
                break
            ty, flags, sid = buf[3], buf[4], int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF
            buf = buf[9 + n:]
            if sid == 1 and ty in (0, 1) and flags & 1:
                return True
            if ty == 7:
                return False
        chunk = sock.recv(65536)
        if not chunk:
            return False
        buf += chunk


def worker_pid(server_pid):
    kids = open("/proc/%d/task/%d/children" % (server_pid, server_pid)).read().split()
    return int(kids[0]) if kids else server_pid


def rss_kib(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    harness.raise_nofile(n * 2 + 256)
    docroot = tempfile.mkdtemp(prefix="httpz-h2mem-")
    with open(os.path.join(docroot, "index.html"), "w") as f:
        f.write("hello\n" * 100)
    srv = harness.Server(docroot, workers=1, args=["--max-connections", str(n + 100)]).start()
    ctx = harness.client_context(alpn=("h2",)) if harness.TLS else None
    hello = PREFACE + frame(4, 0, 0) + frame(4, 1, 0) + frame(1, 5, 1, get_block(harness.TLS))
    try:
        time.sleep(0.5)
        wpid = worker_pid(srv.proc.pid)

        def open_one():
            s = socket.create_connection((harness.HOST, srv.port), timeout=10)
            if ctx:
                s = ctx.wrap_socket(s, server_hostname=harness.HOST)
            s.sendall(hello)
            if not read_frames_until_end(s):
                raise SystemExit("no response on a connection")
            return s

        # Warm up: pools, caches and the first TLS session are not per connection.
        warm = [open_one() for _ in range(20)]
        time.sleep(0.3)
        before = rss_kib(wpid)
        conns = [open_one() for _ in range(n)]
        time.sleep(1.0)
        after = rss_kib(wpid)
        per = (after - before) * 1024.0 / n
        print("transport=%s io=%s connections=%d worker VmRSS before=%d KiB after=%d KiB: %.0f bytes (%.1f KiB) per idle connection"
              % (harness.TRANSPORT, harness.IO or "default", n, before, after, per, per / 1024))
        for s in conns + warm:
            s.close()
    finally:
        srv.proc.terminate()
        srv.proc.wait(timeout=10)


if __name__ == "__main__":
    main()
