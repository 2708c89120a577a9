"""Red-team round 3 (issue 20): what one hostile client, or a few thousand,
can make a worker hold, against the real server on 127.0.0.1.

1. Pinned receive buffers: clients that ask for a large file, never read
   it, and trickle one-byte segments (TCP_NODELAY, 2 ms apart) while a
   fresh client asks for a small file every 50 ms. Every fresh request is
   answered within 1 s, and the worker burns less than half a core meanwhile
   (no re-arm spin). On io_uring this froze the worker for the write
   timeout (29 s) before the fix.
2. Pipelining while downloading: 300 clients each ask for the large file
   and pipeline a second request behind it without reading; fresh clients
   are still answered.
3. Many starved connections: 4,200 connections each send a request head
   in two segments while the trickling clients hold their responses; the
   worker survives (it crashed with "index out of bounds" in its list of
   buffer-starved connections) and still answers.
4. The connection limit: `--max-connections 100` and `wrk -c500` for 4 s
   get requests answered (io_uring answered 0-42 before the fix), and a
   fresh client meets either an answer or an immediate close, never a
   wait.

Run: python3 test/e2e/test_pressure.py   (needs _build/install/default/bin/httpz)
The last line is `N passed, N failed`.
"""

import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("pressure")
H.suite_deadline(R, 150)
H.require_binary(R)
H.raise_nofile(20000)

TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-pressure-"))
DOC = os.path.join(TMP, "root")
os.mkdir(DOC)
with open(os.path.join(DOC, "small.txt"), "wb") as f:
    f.write(b"small\n")
with open(os.path.join(DOC, "big.bin"), "wb") as f:
    f.write(os.urandom(1 << 20) * 32)  # 32 MiB: far more than socket buffers hold


def cpu_seconds(pid):
    """User + system CPU time of a process so far, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def worker_pid(srv):
    """The process that serves: the server itself with --workers 1."""
    return srv.proc.pid


def fresh_latencies(port, seconds, every=0.05):
    """GET /small.txt on a fresh connection every [every] s for [seconds]:
    the list of (latency in s or None on failure)."""
    out = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = time.monotonic()
        try:
            status, _h, body = H.request(port, "GET", "/small.txt", timeout=3.0)
            out.append(time.monotonic() - t0 if status == 200 and body == b"small\n" else None)
        except OSError:
            out.append(None)
        time.sleep(every)
    return out


def hog(port, extra, stop, segments=300, gap=0.002):
    """Asks for the big file, never reads it, then sends [extra] and
    [segments] one-byte segments [gap] s apart (until [stop] is set)."""
    s = H.connect(port, timeout=10, rcvbuf=4096)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n" + extra)
    for _ in range(segments):
        if stop.is_set():
            break
        try:
            s.send(b"G")
        except OSError:
            break
        time.sleep(gap)
    return s


def ssl_want_errors():
    import ssl
    return (ssl.SSLWantWriteError, ssl.SSLWantReadError)


def summary(lat):
    ok = [x for x in lat if x is not None]
    return "%d requests, %d failed, worst %.3f s" % (len(lat), len(lat) - len(ok), max(ok) if ok else -1)


def pinned_buffers():
    srv = H.Server(DOC, workers=1, args=["--write-timeout", "60"], ready_path="/small.txt").start()
    stop = threading.Event()
    socks = []
    hogs = 6

    def run():
        socks.append(hog(srv.port, b"", stop))

    ts = [threading.Thread(target=run) for _ in range(hogs)]
    cpu0 = cpu_seconds(worker_pid(srv))
    t0 = time.monotonic()
    for t in ts:
        t.start()
    lat = fresh_latencies(srv.port, 3.0)
    stop.set()
    for t in ts:
        t.join()
    cpu = cpu_seconds(worker_pid(srv)) - cpu0
    wall = time.monotonic() - t0
    H.log("# %d trickling hogs: fresh clients %s; worker CPU %.2f s in %.2f s" % (hogs, summary(lat), cpu, wall))
    R.check("pinned: every fresh client answered within 1 s (%s)" % summary(lat),
            lat and all(x is not None and x < 1.0 for x in lat), lat)
    R.check("pinned: the worker does not spin (CPU %.2f s in %.2f s)" % (cpu, wall), cpu < 0.5 * wall)
    for s in socks:
        s.close()
    R.check("pinned: still serving after the hogs left", H.request(srv.port, "GET", "/small.txt")[0] == 200)
    srv.stop_and_check(R, "pinned: exits 0")


def pipelining_downloads():
    srv = H.Server(DOC, workers=1, args=["--write-timeout", "60"], ready_path="/small.txt").start()
    rss0 = H.rss_kib(srv.proc.pid)
    socks = []
    # Each also sends 64 KiB more that it will never get to: what the
    # worker keeps of it per connection is bounded by what its socket had
    # received when it stopped reading.
    junk = b"X" * 65536
    for _ in range(300):
        s = H.connect(srv.port, timeout=10, rcvbuf=4096)
        s.setblocking(False)
        try:
            s.send(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\nGET /small.txt HTTP/1.1\r\nHost: x\r\n\r\n" + junk)
        except (BlockingIOError, ssl_want_errors()):
            pass
        socks.append(s)
    lat = fresh_latencies(srv.port, 2.0)
    R.check("300 pipelining downloads: fresh clients answered within 1 s (%s)" % summary(lat),
            lat and all(x is not None and x < 1.0 for x in lat), lat)
    grown = H.rss_kib(srv.proc.pid) - rss0
    H.log("# 300 pipelining downloads with 64 KiB behind: worker RSS +%d KiB" % grown)
    R.check("300 pipelining downloads: worker memory bounded (+%d KiB, at most 64 MiB)" % grown, grown < 65536)
    for s in socks:
        s.close()
    srv.stop_and_check(R, "pipelining downloads: exits 0")


def many_starved():
    srv = H.Server(DOC, workers=1, args=["--write-timeout", "60"], ready_path="/small.txt").start()
    stop = threading.Event()
    hogs = []
    ts = [threading.Thread(target=lambda: hogs.append(hog(srv.port, b"", stop, segments=100))) for _ in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    socks = []
    n = 4200
    try:
        for i in range(n):
            s = socket.socket()
            s.setblocking(True)
            s.settimeout(5)
            try:
                s.connect((H.HOST, srv.port))
            except OSError:
                s.close()
                continue
            socks.append(s)
        if H.TLS:
            pass  # raw bytes on a TLS port end in a failed handshake: still load
        for s in socks:
            try:
                s.send(b"GET /small.txt HTTP/1.1\r\n")
            except OSError:
                pass
        for s in socks:
            try:
                s.send(b"Host: x\r\n\r\n")
            except OSError:
                pass
        time.sleep(1.0)
        alive = srv.alive()
        R.check("%d connections while buffers are pinned: the worker is alive" % len(socks), alive,
                srv.stderr_text()[-800:])
        R.check("starved: no 'index out of bounds'", "index out of bounds" not in srv.stderr_text(),
                srv.stderr_text()[-800:])
    finally:
        for s in socks:
            s.close()
        stop.set()
        for s in hogs:
            s.close()
    R.check("starved: serving afterwards",
            H.wait_until(lambda: H.request(srv.port, "GET", "/small.txt")[0] == 200, 5.0))
    srv.stop_and_check(R, "starved: exits 0")


def ok_request(port):
    try:
        return H.request(port, "GET", "/small.txt")[0] == 200
    except OSError:
        return False


def connection_limit():
    srv = H.Server(DOC, workers=1, args=["--max-connections", "100"], ready_path="/small.txt").start()
    out = {}

    def load():
        p = subprocess.run(["wrk", "-t1", "-c500", "-d4s", H.url(srv.port, "/small.txt")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=H.CLIENT_ENV, timeout=30)
        out["text"] = p.stdout.decode("utf-8", "replace")

    t = threading.Thread(target=load)
    t.start()
    time.sleep(2.0)
    # A fresh client at the limit: an answer, or a close at once, never a wait.
    fresh = []
    for _ in range(10):
        t1 = time.monotonic()
        try:
            st = H.request(srv.port, "GET", "/small.txt", timeout=3.0)[0]
        except OSError:
            st = "closed"
        fresh.append((st, round(time.monotonic() - t1, 3)))
    t.join()
    m = re.search(r"(\d+) requests in", out.get("text", ""))
    total = int(m.group(1)) if m else 0
    H.log("# --max-connections 100, wrk -c500: %d requests answered; fresh clients %s" % (total, fresh))
    R.check("limit: wrk -c500 over --max-connections 100 gets requests answered (%d)" % total, total >= (200 if H.TLS else 20000),
            out.get("text"))
    R.check("limit: a fresh client is answered or closed at once (%s)" % fresh,
            all(d < 1.5 for _s, d in fresh) and any(s == 200 for s, _d in fresh), fresh)
    # (The 500 closes reach the worker in its next turn, a moment later.)
    R.check("limit: serving afterwards", H.wait_until(lambda: ok_request(srv.port), 3.0))
    srv.stop_and_check(R, "limit: exits 0")


PARTS = [("pinned receive buffers", pinned_buffers), ("pipelining downloads", pipelining_downloads),
         ("starved connections", many_starved), ("connection limit", connection_limit)]
# PRESSURE_ONLY=word runs the parts whose name contains it (while debugging).
for name, fn in PARTS:
    if os.environ.get("PRESSURE_ONLY", "") in name:
        H.part(R, name, fn, stop_servers=True)
R.finish()
