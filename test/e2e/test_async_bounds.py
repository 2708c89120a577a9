"""Waiting handlers stay bounded (red-team issue 20), end to end against
examples/async_demo.exe on one worker, on 127.0.0.1.

Memory is read from the demo's GET /gc (with --stats: a full major
collection, then the live words of the OCaml heap), so a few hundred bytes
kept per wait show up after some thousands of waits.

1. A long stream: GET /stream?n=30000&ms=0 on one connection (a flush and
   a sleep per piece). The live heap between piece 3,000 and piece 27,000
   grows by under 256 KiB (it grew by ~270 B per piece: each sleep's cancel
   hook stayed until the request ended).
2. Abandoned sleeps: while one client waits on GET /sleep?ms=300000,
   rounds of 500 clients that send GET /sleep?ms=600000 and hang up.
   After a warm-up round, eight more rounds (4,000 sleeps) leave the live
   heap within 128 KiB (a cancelled timer kept its closures in the timer
   heap until its deadline, behind the earlier live one: ~155 B each).
3. The offload pool (4 threads, 256 queued jobs by default):
   a. 300 clients send GET /offload?ms=200 and hang up at once; a
      legitimate GET /offload?ms=0 is then answered within 2 s (the jobs of
      the clients that left were run anyway: ~15 s of work queued).
   b. 300 clients send GET /offload?ms=1000 and wait: those past the 4
      running and 256 queued jobs get 503 with Retry-After within a second
      (none did: the queue had no bound); once they all hang up, a
      GET /offload?ms=0 is answered within 2 s.
   c. --offload-threads 2 --offload-queue 8: of 30 clients of
      /offload?ms=1000, 8 to 10 are accepted (8 wait, 2 more if the threads
      took theirs in between) and the others get 503 at once.

Run: python3 test/e2e/test_async_bounds.py   (needs the examples built by dune build)
The last line is `N passed, N failed`.
"""

import os
import select
import ssl
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("async-bounds")
H.suite_deadline(R, 170)
H.raise_nofile(65536)


def demo(*args):
    return H.Program([H.example("async_demo")] + H.STATS_ARGS + list(args), ready_path="/hello?name=x").start()


def live_bytes(port):
    st, _, body = H.request(port, "GET", "/gc", timeout=10)
    if st != 200:
        raise H.ServerError("/gc answered %s: %r" % (st, body))
    fields = body.split()
    return int(fields[1]) * 8


def kib(n):
    return n // 1024


def stream_memory():
    srv = demo()
    n = 30000
    marks = {3000: None, 27000: None}
    s = H.connect(srv.port, timeout=10)
    s.sendall(b"GET /stream?n=%d&ms=0 HTTP/1.1\r\nHost: x\r\n\r\n" % n)
    seen = 0
    tail = b""
    t0 = time.monotonic()
    done = False
    while not done and time.monotonic() - t0 < 60:
        data = s.recv(65536)
        if not data:
            break
        window = tail + data
        seen += window.count(b"chunk ") - tail.count(b"chunk ")
        tail = window[-16:]
        done = b"0\r\n\r\n" in window
        for m in marks:
            if marks[m] is None and seen >= m:
                marks[m] = live_bytes(srv.port)
    s.close()
    dt = time.monotonic() - t0
    R.check("/stream?n=%d&ms=0: all pieces (%.1f s)" % (n, dt), done and seen == n, seen)
    a, b = marks[3000], marks[27000]
    R.check("... the live heap from piece 3,000 to 27,000: %s -> %s KiB (growth < 256 KiB)"
            % (a and kib(a), b and kib(b)),
            a is not None and b is not None and b - a < 256 * 1024, (a, b))
    R.check("... RSS %d KiB" % H.rss_kib(srv.proc.pid), True)
    srv.stop_and_check(R, "async_demo exits 0 on SIGTERM")


def server_connections(srv):
    # The stats request itself is one.
    return srv.stats()["connections"] - 1


def abandon_sleeps(srv, k):
    socks = [H.connect(srv.port, timeout=10) for _ in range(k)]
    for s in socks:
        s.sendall(b"GET /sleep?ms=600000 HTTP/1.1\r\nHost: x\r\n\r\n")
    # Every request is waiting in its handler before its client leaves.
    time.sleep(0.3)
    for s in socks:
        s.close()
    return H.wait_until(lambda: server_connections(srv) <= 1, 10)


def sleep_memory():
    srv = demo()
    k, rounds = 500, 8
    # A live timer due before theirs: the cancelled timers are behind it.
    live = H.connect(srv.port, timeout=10)
    live.sendall(b"GET /sleep?ms=300000 HTTP/1.1\r\nHost: x\r\n\r\n")
    R.check("warm-up: %d abandoned /sleep?ms=600000, all closed" % k, abandon_sleeps(srv, k))
    before = live_bytes(srv.port)
    rss0 = H.rss_kib(srv.proc.pid)
    closed = all([abandon_sleeps(srv, k) for _ in range(rounds)])
    after = live_bytes(srv.port)
    R.check("%d more abandoned sleeps: all closed" % (k * rounds), closed)
    R.check("... the live heap: %d -> %d KiB (growth < 128 KiB); RSS %d -> %d KiB"
            % (kib(before), kib(after), rss0, H.rss_kib(srv.proc.pid)),
            after - before < 128 * 1024, (before, after))
    live.close()
    srv.stop_and_check(R, "async_demo exits 0 on SIGTERM")


def legit_offload(port, name, bound=2.0):
    t0 = time.monotonic()
    try:
        st, _, body = H.request(port, "GET", "/offload?ms=0", timeout=bound + 3)
    except OSError as e:
        st, body = None, repr(e)
    dt = time.monotonic() - t0
    R.check("%s: GET /offload?ms=0 answered in %.2f s (< %.0f s)" % (name, dt, bound),
            st == 200 and body == b"offloaded 0\n" and dt < bound, (st, body, dt))


def send_all(port, n, path):
    socks = [H.connect(port, timeout=10) for _ in range(n)]
    for s in socks:
        s.sendall(b"GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path)
    return socks


def poll_response(s):
    """The response [s] has started to receive, or None when no byte of
    one is here yet (a TLS socket is also readable for the session tickets
    that follow the handshake)."""
    s.settimeout(0.0)
    try:
        data = s.recv(65536)
    except (BlockingIOError, ssl.SSLWantReadError):
        return None
    r = H.Reader(s)
    r.buf = data
    if not data:
        return H.Response(None, "", [], b"", b"")
    return r.read_response(timeout=2)


def quick_answers(socks, within):
    """The responses that arrive within [within] s: (status, retry-after, sock)."""
    deadline = time.monotonic() + within
    pending = list(socks)
    got = []
    while pending and time.monotonic() < deadline:
        ready, _, _ = select.select(pending, [], [], max(0, deadline - time.monotonic()))
        for s in ready:
            r = poll_response(s)
            if r is not None:
                pending.remove(s)
                got.append((r.status, r.header("retry-after"), s))
    return got


def offload_gone():
    srv = demo()
    for s in send_all(srv.port, 300, b"/offload?ms=200"):
        s.close()
    time.sleep(0.3)
    legit_offload(srv.port, "after 300 /offload?ms=200 whose clients left")
    srv.stop_and_check(R, "async_demo exits 0 on SIGTERM")


def offload_bound():
    srv = demo()
    n = 300
    socks = send_all(srv.port, n, b"/offload?ms=1000")
    t0 = time.monotonic()
    got = quick_answers(socks, 0.8)
    dt = time.monotonic() - t0
    refused = [g for g in got if g[0] == 503 and g[1] == "1"]
    R.check("%d /offload?ms=1000 at once: %d answered 503 with Retry-After: 1 within %.1f s "
            "(4 run, 256 wait: want 40)" % (n, len(refused), dt),
            len(got) == len(refused) and 30 <= len(refused) <= n - 256,
            [(g[0], g[1]) for g in got][:20])
    for s in socks:
        s.close()
    time.sleep(0.3)
    legit_offload(srv.port, "once those clients left")
    srv.stop_and_check(R, "async_demo exits 0 on SIGTERM")


def offload_config():
    srv = demo("--offload-threads", "2", "--offload-queue", "8")
    socks = send_all(srv.port, 30, b"/offload?ms=1000")
    got = quick_answers(socks, 0.5)
    refused = [g for g in got if g[0] == 503]
    # 8 wait, and up to 2 more if the threads took theirs before the rest came.
    R.check("--offload-threads 2 --offload-queue 8: %d of 30 refused at once (want 20 to 22)" % len(refused),
            len(got) == len(refused) and 20 <= len(refused) <= 22, [(g[0], g[1]) for g in got])
    later = quick_answers([s for s in socks if all(s is not g[2] for g in got)], 8)
    R.check("... the other %d answered 200 within 8 s" % (30 - len(got)),
            len(later) == 30 - len(got) and all(g[0] == 200 for g in later), [(g[0], g[1]) for g in later])
    for s in socks:
        s.close()
    srv.stop_and_check(R, "async_demo exits 0 on SIGTERM")


H.part(R, "stream memory", stream_memory, stop_servers=True)
H.part(R, "abandoned sleeps", sleep_memory, stop_servers=True)
H.part(R, "offload: clients gone", offload_gone, stop_servers=True)
H.part(R, "offload: queue bound", offload_bound, stop_servers=True)
H.part(R, "offload: configuration", offload_config, stop_servers=True)
R.finish()
