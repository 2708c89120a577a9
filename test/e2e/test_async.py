"""The server library's asynchronous side, end to end: examples/async_demo.exe
and examples/lwt_demo.exe on one worker each, on 127.0.0.1.

async_demo (issue 12's routes):
1. 200 concurrent GET /sleep?ms=1000 all finish within 2.5 s.
2. GET /stream?n=5&ms=300: the first piece arrives at once, the others
   about 300 ms apart, chunked, in order.
3. POST /count with a 1 GiB body (Content-Length), read as it arrives: the
   right byte count and sum, and the worker's RSS grows by under 32 MiB.
   A chunked upload of 20 MiB too.
4. GET /hello answers in milliseconds while four GET /offload?ms=1000 run
   on the thread pool; the four finish within 1.5 s.
5. GET /hello?name=J%C3%B6rg+X: decoded.
6. GET /static/...: the files of DIR; %2e%2e and .. never reach the secret
   file beside DIR; anything else 404.
7. A handler timeout: not exercised here (test/server/h1 covers it).

lwt_demo: GET /sleep (Lwt_unix.sleep 0.2) x 50 concurrently within 1 s;
GET /file (Lwt_io) returns the file.

Run: python3 test/e2e/test_async.py   (needs the examples built by dune build)
The last line is `N passed, N failed`.
"""

import os
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("async")
H.suite_deadline(R, 110)
H.raise_nofile(65536)

TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-async-"))
DOC = os.path.join(TMP, "site")
os.mkdir(DOC)
with open(os.path.join(DOC, "index.html"), "wb") as f:
    f.write(b"<p>static under a prefix</p>\n")
with open(os.path.join(TMP, "secret.txt"), "wb") as f:
    f.write(b"SECRET\n")


def get(port, path, timeout=5.0):
    return H.request(port, "GET", path, timeout=timeout)


def concurrent_sleeps(port):
    n = 200
    socks = []
    for _ in range(n):
        s = H.connect(port, timeout=5)
        socks.append(s)
    t0 = time.monotonic()
    for s in socks:
        s.sendall(b"GET /sleep?ms=1000 HTTP/1.1\r\nHost: x\r\n\r\n")
    ok = 0
    for s in socks:
        r = H.Reader(s).read_response(timeout=5)
        if r is not None and r.status == 200 and r.body == b"slept 1000\n":
            ok += 1
        s.close()
    dt = time.monotonic() - t0
    R.check("200 concurrent /sleep?ms=1000: all answered", ok == n, "%d of %d" % (ok, n))
    R.check("... within 2.5 s (%.2f s)" % dt, 1.0 <= dt < 2.5, dt)


def stream(port):
    s = H.connect(port, timeout=5)
    t0 = time.monotonic()
    s.sendall(b"GET /stream?n=5&ms=300 HTTP/1.1\r\nHost: x\r\n\r\n")
    data = b""
    arrivals = []
    while b"0\r\n\r\n" not in data and time.monotonic() - t0 < 5:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
        arrivals.append((time.monotonic() - t0, data.count(b"chunk ")))
    s.close()
    first = next((t for t, k in arrivals if k >= 1), None)
    last = next((t for t, k in arrivals if k >= 5), None)
    R.check("/stream: chunked", b"transfer-encoding: chunked" in data.lower(), data[:300])
    R.check("/stream: five pieces in order",
            all(("chunk %d\n" % i).encode() in data for i in range(1, 6))
            and data.index(b"chunk 1") < data.index(b"chunk 5"), data[-300:])
    R.check("/stream: the first piece at once (%.3f s)" % (first or -1), first is not None and first < 0.2, arrivals)
    R.check("/stream: the last after ~1.2 s (%.2f s)" % (last or -1), last is not None and 1.1 < last < 2.5, arrivals)


def upload(port, pid):
    block = bytes(range(256)) * 256  # 64 KiB
    blocks = 16384  # 1 GiB
    total = len(block) * blocks
    want_sum = (sum(block) * blocks) & 0xFFFFFFFF
    before = H.rss_kib(pid)
    peak = [before]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], H.rss_kib(pid))
            time.sleep(0.05)

    th = threading.Thread(target=sample)
    th.start()
    s = H.connect(port, timeout=30)
    t0 = time.monotonic()
    try:
        s.sendall(b"POST /count HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % total)
        for _ in range(blocks):
            s.sendall(block)
        r = H.Reader(s).read_response(timeout=30)
    finally:
        stop.set()
        th.join()
        s.close()
    dt = time.monotonic() - t0
    want = b"%d bytes, sum %d\n" % (total, want_sum)
    R.check("POST /count, 1 GiB: counted (%.1f s)" % dt, r is not None and r.body == want,
            "%r, want %r" % (r and r.body, want))
    R.check("... RSS grew by %d KiB (< 32 MiB)" % (peak[0] - before), peak[0] - before < 32 * 1024,
            "before %d, peak %d KiB" % (before, peak[0]))
    # Chunked, 20 MiB in uneven chunks.
    body = bytes((i * 7) & 0xFF for i in range(1 << 20))
    s = H.connect(port, timeout=30)
    s.sendall(b"POST /count HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
    sent = 0
    for i in range(20):
        piece = body[: 1000 + 37 * i] if i % 2 else body
        s.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n")
        sent += len(piece)
    s.sendall(b"0\r\n\r\n")
    r = H.Reader(s).read_response(timeout=30)
    s.close()
    want_sum = 0
    for i in range(20):
        piece = body[: 1000 + 37 * i] if i % 2 else body
        want_sum += sum(piece)
    R.check("POST /count, chunked: counted",
            r is not None and r.body == b"%d bytes, sum %d\n" % (sent, want_sum & 0xFFFFFFFF),
            r and r.body)


def offload(port):
    results = []

    def one():
        results.append(get(port, "/offload?ms=1000", timeout=5))

    t0 = time.monotonic()
    ths = [threading.Thread(target=one) for _ in range(4)]
    for t in ths:
        t.start()
    time.sleep(0.2)
    t1 = time.monotonic()
    st, _, body = get(port, "/hello?name=meanwhile")
    hello_dt = time.monotonic() - t1
    for t in ths:
        t.join()
    dt = time.monotonic() - t0
    R.check("/hello while four /offload run: answered in %.1f ms" % (hello_dt * 1000),
            st == 200 and body == b"hello meanwhile\n" and hello_dt < 0.1, (st, body))
    R.check("four /offload?ms=1000 on the pool: all answered within 1.5 s (%.2f s)" % dt,
            len(results) == 4 and all(r[0] == 200 and r[2] == b"offloaded 1000\n" for r in results) and dt < 1.5,
            results)


def routes(port):
    st, _, body = get(port, "/hello?name=J%C3%B6rg+X")
    R.check("/hello decodes %XX and +", st == 200 and body == "hello Jörg X\n".encode(), (st, body))
    st, _, body = get(port, "/static/index.html")
    R.check("/static/index.html: the file", st == 200 and body == b"<p>static under a prefix</p>\n", (st, body))
    st, _, body = get(port, "/static/")
    R.check("/static/: the index", st == 200 and b"static under a prefix" in body, (st, body))
    for path in ["/static/%2e%2e/secret.txt", "/static/../secret.txt", "/static/%2E%2E%2Fsecret.txt",
                 "/static/..%2fsecret.txt", "/secret.txt", "/static/%2e%2e%2f%2e%2e/etc/passwd"]:
        st, _, body = get(port, path)
        R.check("%s: not the secret (%s)" % (path, st), st in (400, 403, 404) and b"SECRET" not in body, (st, body))
    st, _, _ = get(port, "/nowhere")
    R.check("anything else: 404", st == 404, st)


def lwt_demo():
    fname = os.path.join(TMP, "lwt.txt")
    with open(fname, "wb") as f:
        f.write(b"read by Lwt_io\n" * 100)
    srv = H.Program([H.example("lwt_demo"), "-f", fname], ready_path="/file").start()
    results = []

    def one():
        results.append(get(srv.port, "/sleep"))

    t0 = time.monotonic()
    ths = [threading.Thread(target=one) for _ in range(50)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    dt = time.monotonic() - t0
    R.check("lwt_demo: 50 concurrent /sleep (Lwt_unix.sleep 0.2) within 1 s (%.2f s)" % dt,
            len(results) == 50 and all(r[0] == 200 and r[2] == b"slept 200 ms\n" for r in results) and dt < 1.0,
            results[:3])
    st, _, body = get(srv.port, "/file")
    R.check("lwt_demo: /file read with Lwt_io", st == 200 and body == b"read by Lwt_io\n" * 100, (st, body[:100]))
    srv.stop_and_check(R, "lwt_demo exits 0 on SIGTERM")


demo = H.Program([H.example("async_demo"), "-d", DOC], ready_path="/hello?name=x")
H.part(R, "start async_demo", demo.start)
if demo.alive():
    H.part(R, "concurrent sleeps", lambda: concurrent_sleeps(demo.port))
    H.part(R, "stream", lambda: stream(demo.port))
    H.part(R, "offload", lambda: offload(demo.port))
    H.part(R, "routes", lambda: routes(demo.port))
    H.part(R, "upload", lambda: upload(demo.port, demo.proc.pid))
    demo.stop_and_check(R, "async_demo exits 0 on SIGTERM")
H.part(R, "lwt_demo", lwt_demo)
R.finish()
