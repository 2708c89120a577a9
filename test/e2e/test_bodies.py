"""Request bodies against the real `httpz serve`, all on 127.0.0.1.

The static handler never asks for a request body, so a body is never read
into memory: the request is answered at once and the connection closes
after the response, lingering to drain what the client still sends.

1. 300 connections at once, each a GET with a 1 MiB body (the red-team
   memory attack): every one answered; the worker's RSS after they close
   stays within 16 MiB of what it was before (it grew by about 1 GiB per
   1000 such connections when bodies were buffered and kept).
2. A GET announcing `Content-Length: 1048576` and sending nothing: answered
   at once, `Connection: close`.
3. `Expect: 100-continue` on a POST the handler refuses: the final 405 comes
   first, never `100 Continue`.
4. CONNECT with a body: 400 and closed; the bytes after the head (a
   smuggled request) are never answered.
5. Errors the server writes itself carry `X-Content-Type-Options: nosniff`.

Run: python3 test/e2e/test_bodies.py   (needs _build/install/default/bin/httpz)
The last line is `N passed, N failed`.
"""

import os
import select
import ssl
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("bodies")
H.suite_deadline(R, 60)
H.require_binary(R)
H.raise_nofile(65536)

DOC = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-bodies-"))
with open(os.path.join(DOC, "index.html"), "wb") as f:
    f.write(b"<p>bodies</p>\n")
MIB = 1 << 20


def memory_attack(srv):
    n = 300
    pid = srv.proc.pid
    before = H.rss_kib(pid)
    body = b"b" * MIB
    head = b"GET /index.html HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % MIB
    socks = []
    for _ in range(n):
        s = H.connect(srv.port, timeout=5)
        s.setblocking(False)
        socks.append([s, head + body, b""])
    # Push every request while collecting answers, all connections at once.
    deadline = time.monotonic() + 30
    pending = list(socks)
    while pending and time.monotonic() < deadline:
        wr = [p[0] for p in pending if p[1]]
        rd = [p[0] for p in pending]
        r, w, _ = select.select(rd, wr, [], 1.0)
        for p in pending:
            s = p[0]
            if s in w:
                try:
                    k = s.send(p[1][:262144])
                    p[1] = p[1][k:]
                except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
                    pass  # the socket is full after all: later
                except OSError:
                    p[1] = b""
            # A TLS socket may hold decrypted bytes select() cannot see.
            if s in r or (H.TLS and s.pending()):
                try:
                    chunk = s.recv(65536)
                except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                    continue  # part of a record: later
                except OSError:
                    chunk = b""
                if chunk:
                    p[2] += chunk
                else:
                    p[1] = b""
                    p.append("eof")
        pending = [p for p in pending if "eof" not in p]
    answered = sum(1 for p in socks if p[2].startswith(b"HTTP/1.1 200"))
    closing = sum(1 for p in socks if b"connection: close" in p[2].lower())
    for p in socks:
        p[0].close()
    R.check("300 GETs with 1 MiB bodies: all answered 200", answered == n, "%d of %d" % (answered, n))
    R.check("... each with Connection: close", closing == n, "%d of %d" % (closing, n))
    H.wait_until(lambda: srv.stats()["connections"] == 0, 5)
    after = H.rss_kib(pid)
    R.check("worker RSS after they closed within 16 MiB of before (%d -> %d KiB)" % (before, after),
            after - before < 16 * 1024, "grew by %d KiB" % (after - before))


def announced_not_sent(srv):
    s = H.connect(srv.port)
    t0 = time.monotonic()
    s.sendall(b"GET /index.html HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n")
    r = H.Reader(s).read_response(timeout=3)
    dt = time.monotonic() - t0
    R.check("GET announcing 1 MiB, sending none: 200 at once (%.3f s)" % dt, r.status == 200 and dt < 1, r)
    R.check("... and Connection: close", (r.header("connection") or "").lower() == "close", r)
    s.close()


def expect_refused(srv):
    s = H.connect(srv.port)
    s.sendall(b"POST /index.html HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
              b"Content-Length: 100000\r\n\r\n")
    r = H.Reader(s).read_response(timeout=3)
    R.check("Expect: 100-continue on a refused POST: 405 first, no 100", r.status == 405, r)
    s.close()


def connect_with_body(srv):
    s = H.connect(srv.port)
    s.sendall(b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nContent-Length: 34\r\n\r\n"
              b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n")
    rd = H.Reader(s)
    r = rd.read_response(timeout=3)
    R.check("CONNECT with a body: 400", r.status == 400, r)
    R.check("... and nosniff on the server's own error page",
            r.header("x-content-type-options") == "nosniff", r)
    rest = rd.read_to_eof(timeout=3)
    R.check("... then closed, the smuggled GET never answered", b"HTTP/1.1" not in rest, rest[:200])
    s.close()


srv = H.Server(DOC, workers=1, args=list(H.STATS_ARGS))
H.part(R, "start", srv.start)
if srv.alive():
    H.part(R, "memory attack", lambda: memory_attack(srv))
    H.part(R, "announced, not sent", lambda: announced_not_sent(srv))
    H.part(R, "expect refused", lambda: expect_refused(srv))
    H.part(R, "connect with body", lambda: connect_with_body(srv))
    R.check("server still answers", H.request(srv.port, "GET", "/index.html")[0] == 200)
    srv.stop_and_check(R)
R.finish()
