"""Concurrency and robustness of `httpz serve` under real load, all on 127.0.0.1.

1. 10,000 concurrent keep-alive connections (the server, started with a soft
   fd limit of 1024, raises its own), then a fresh curl within 2 s.
2. 500 slowloris connections (a byte a second) while normal requests are
   served promptly; the header-read timeout (--header-timeout 4) closes the
   slow ones.
3. --workers 2: SIGKILL one worker; requests still succeed, a new worker
   appears within 5 s.
4. SIGTERM during a 200 MiB download read slowly: the download completes
   byte-exact, new connections are refused, the server exits 0.
5. wrk -t1 -c50 -d3s: no socket errors, no non-2xx.
6. Steady-state GC: minor words per request from /__httpz/stats over 10,000
   keep-alive 200s and 10,000 304s, asserted == 0.

Run: python3 test/e2e/test_load.py   (needs _build/install/default/bin/httpz, wrk, curl)
The last line is `N passed, N failed`.
"""

import errno
import gzip
import json
import os
import re
import select
import selectors
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("load")
H.suite_deadline(R, 170)
H.require_binary(R)

N_CONNS = 10_000
N_SLOW = 500
BIG_SIZE = 200 << 20
HEADER_TIMEOUT = 4.0  # passed as --header-timeout (default 10 s) to keep the suite short

TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-load-"))
DOC = os.path.join(TMP, "root")
os.mkdir(DOC)
SMALL = b"".join(b"line %03d of the small file\n" % i for i in range(23))[:611] + b"\n"
assert len(SMALL) == 612
with open(os.path.join(DOC, "small.txt"), "wb") as f:
    f.write(SMALL)
# 200 MiB, sparse, with a distinct marker every MiB so that a lost, repeated
# or reordered block shows up in the byte-by-byte comparison.
BIG = os.path.join(DOC, "big.bin")
with open(BIG, "wb") as f:
    f.truncate(BIG_SIZE)
    for off in range(0, BIG_SIZE, 1 << 20):
        f.seek(off + 4096 * ((off >> 20) % 200))
        f.write(b"<MiB %08d marker>" % (off >> 20))

SOFT, HARD = H.raise_nofile()
H.log("# RLIMIT_NOFILE for the test and the server it starts: soft %d, hard %d" % (SOFT, HARD))


def part(name, fn):
    H.part(R, name, fn, stop_servers=True)


def soft_nofile(pid):
    try:
        with open("/proc/%d/limits" % pid) as f:
            for line in f:
                if line.startswith("Max open files"):
                    return int(line.split()[3])
    except (OSError, ValueError, IndexError):
        return None


def response_complete(buf):
    """None while incomplete, else (status, body)."""
    i = buf.find(b"\r\n\r\n")
    if i < 0:
        return None
    head = buf[:i].decode("latin-1")
    m = re.search(r"(?im)^content-length:\s*(\d+)\s*$", head)
    n = int(m.group(1)) if m else 0
    if len(buf) < i + 4 + n:
        return None
    return int(head.split(" ", 2)[1]), buf[i + 4:i + 4 + n]


def curl_timed(port, path="/small.txt"):
    p = H.curl(["-o", "/dev/null", "-w", "%{http_code} %{time_total}", H.url(port, path)], timeout=10)
    try:
        code, t = p.stdout.decode().split()
        return int(code), float(t), p.stderr
    except ValueError:
        return None, None, p.stderr


# ---------------------------------------------------------------------------
def many_connections():
    # Start the server with a soft fd limit of 1024 (the usual default): it
    # must raise its own soft limit to the hard one to hold 10,000 sockets.
    srv = H.Server(DOC, workers=2, ready_path="/small.txt",
                   prefix=["prlimit", "--nofile=1024:%d" % HARD]).start()
    workers = H.wait_until(lambda: len(srv.children()) == 2 and srv.children(), 5) or []
    limits = [soft_nofile(p) for p in workers]
    R.check("workers started with soft RLIMIT_NOFILE 1024 raised it to the hard limit %d" % HARD,
            len(limits) == 2 and all(l == HARD for l in limits), "workers %r soft limits %r" % (workers, limits))
    req = b"GET /small.txt HTTP/1.1\r\nHost: x\r\n\r\n"
    sel = selectors.DefaultSelector()
    live = {}  # fd -> [sock, state, buf]
    done, errors = [], []
    started = 0
    t0 = time.monotonic()
    deadline = t0 + 30
    while (started < N_CONNS or live) and time.monotonic() < deadline:
        while started < N_CONNS and len(live) < 1000:
            started += 1
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            e = s.connect_ex((H.HOST, srv.port))
            if e not in (0, errno.EINPROGRESS):
                errors.append("connect: %s" % errno.errorcode.get(e, e))
                s.close()
                continue
            st = [s, "connecting", b""]
            live[s.fileno()] = st
            sel.register(s, selectors.EVENT_WRITE, st)
        for key, _ev in sel.select(timeout=0.5):
            st = key.data
            s = st[0]
            if st[1] == "connecting":
                e = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if e:
                    errors.append("connect: %s" % errno.errorcode.get(e, e))
                    sel.unregister(s)
                    del live[s.fileno()]
                    s.close()
                    continue
                if H.TLS:
                    sel.unregister(s)
                    s = st[0] = H.wrap_nonblocking(s)
                    st[1] = "handshaking"
                    sel.register(s, selectors.EVENT_WRITE, st)
                else:
                    s.send(req)
                    st[1] = "reading"
                    sel.modify(s, selectors.EVENT_READ, st)
                    continue
            if st[1] == "handshaking":
                try:
                    s.do_handshake()
                except ssl.SSLWantReadError:
                    sel.modify(s, selectors.EVENT_READ, st)
                    continue
                except ssl.SSLWantWriteError:
                    sel.modify(s, selectors.EVENT_WRITE, st)
                    continue
                except (ssl.SSLError, OSError) as e:
                    errors.append("handshake: %r" % e)
                    sel.unregister(s)
                    del live[s.fileno()]
                    s.close()
                    continue
                s.send(req)  # a 36-byte record: the socket takes it
                st[1] = "reading"
                sel.modify(s, selectors.EVENT_READ, st)
                continue
            try:
                data = s.recv(65536)
            except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                continue
            except OSError as e:
                data, err = None, e
            if not data:
                errors.append("closed before a response: %r" % (err if data is None else "EOF"))
                sel.unregister(s)
                del live[s.fileno()]
                s.close()
                continue
            st[2] += data
            r = response_complete(st[2])
            if r is not None:
                sel.unregister(s)
                del live[s.fileno()]
                if r != (200, SMALL):
                    errors.append("bad response %r" % (st[2][:200],))
                    s.close()
                else:
                    done.append(s)
    elapsed = time.monotonic() - t0
    sel.close()
    for st in live.values():
        st[0].close()
    H.log("# %d connections answered in %.1f s, %d errors, %d unfinished"
          % (len(done), elapsed, len(errors), len(live)))
    R.check("%d concurrent keep-alive connections each got a 200 with the file" % N_CONNS,
            len(done) == N_CONNS and not errors,
            "%d ok, %d errors (first: %r), %d unfinished after %.1f s"
            % (len(done), len(errors), errors[:5], len(live), elapsed))
    code, t, err = curl_timed(srv.port)
    R.check("with %d connections open, a fresh curl gets 200 within 2 s" % len(done),
            code == 200 and t < 2.0, "http_code=%s time_total=%s stderr=%r" % (code, t, err))
    # An idle, open connection has nothing to read; a closed one reads EOF.
    poll = select.poll()
    for s in done:
        poll.register(s, select.POLLIN)
    still = len(done) - len(poll.poll(0))
    R.check("all %d connections still open (server keeps idle keep-alive connections)" % len(done),
            still == len(done), "%d of %d still open after %.1f s" % (still, len(done), time.monotonic() - t0))
    for s in done:
        s.close()
    R.check("server alive after %d connections" % N_CONNS, srv.alive(), srv.stderr_text()[-800:])
    srv.stop_and_check(R, "server (10k connections) exits 0 on SIGTERM")


# ---------------------------------------------------------------------------
def idle_memory_and_limit():
    """One worker holding N idle keep-alive connections: its memory per
    connection (no buffer, no parse state: only the slot), and at
    --max-connections N a fresh client answered by closing the connection
    idle longest."""
    n = 2000 if H.TLS else 10_000
    bound = 16 * 1024 if H.TLS else 1024  # OpenSSL keeps ~14 KB per TLS connection
    srv = H.Server(DOC, workers=1, ready_path="/small.txt",
                   args=H.STATS_ARGS + ["--max-connections", str(n)]).start()
    req = b"GET /small.txt HTTP/1.1\r\nHost: x\r\n\r\n"
    warm = []
    for _ in range(20):
        s = H.connect(srv.port)
        s.sendall(req)
        H.Reader(s).read_response()
        warm.append(s)
    for s in warm:
        s.close()
    time.sleep(0.3)
    before = H.rss_kib(srv.proc.pid)
    conns = []
    for _ in range(n):
        s = H.connect(srv.port, timeout=10)
        s.sendall(req)
        r = H.Reader(s).read_response()
        if r is None or r.status != 200:
            break
        conns.append(s)
    time.sleep(0.5)
    after = H.rss_kib(srv.proc.pid)
    per = (after - before) * 1024.0 / max(1, len(conns))
    H.log("# %d idle keep-alive connections: worker RSS %d -> %d KiB, %.0f bytes each"
          % (len(conns), before, after, per))
    R.check("%d idle keep-alive connections held" % n, len(conns) == n, len(conns))
    R.check("an idle keep-alive connection costs at most %d bytes of RSS (%.0f)" % (bound, per),
            per <= bound, per)
    t = time.monotonic()
    st, _h, body = H.request(srv.port, "GET", "/small.txt", timeout=5)
    dt = time.monotonic() - t
    R.check("at the limit, a fresh client is answered within 1 s (%.3f s)" % dt,
            st == 200 and body == SMALL and dt < 1.0, (st, dt))
    R.check("... by closing the connection idle longest", srv.stats().get("evicted", 0) >= 1,
            srv.stats())
    # The oldest one was closed: it reads EOF at once.
    conns[0].settimeout(2)
    try:
        closed = conns[0].recv(1) == b""
    except OSError:
        closed = True
    R.check("... the first connection (idle longest) is the one closed", closed, "")
    for s in conns:
        s.close()
    srv.stop_and_check(R, "server (idle memory) exits 0 on SIGTERM")


# ---------------------------------------------------------------------------
def slowloris():
    srv = H.Server(DOC, workers=1, args=["--header-timeout", "%g" % HEADER_TIMEOUT],
                   ready_path="/small.txt").start()
    slow = []
    opened = []  # when each connection started: the header timeout counts from there
    for _ in range(N_SLOW):
        opened.append(time.monotonic())
        s = H.connect(srv.port)
        s.sendall(b"GET /small.txt HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        s.setblocking(False)
        slow.append(s)
    t_first = time.monotonic()
    closed_at = {}
    latencies, failures = [], []
    next_trickle = t_first + 1.0
    end = t_first + HEADER_TIMEOUT + 4.0
    while time.monotonic() < end and len(closed_at) < N_SLOW:
        now = time.monotonic()
        if now >= next_trickle:
            next_trickle += 1.0
            for i, s in enumerate(slow):
                if i in closed_at:
                    continue
                try:
                    s.send(b"a")
                except (ssl.SSLWantWriteError, ssl.SSLWantReadError):
                    pass
                except OSError:
                    closed_at[i] = now - opened[i]
        for i, s in enumerate(slow):
            if i in closed_at:
                continue
            try:
                while True:  # a 408 may come before the close
                    d = s.recv(4096)
                    if not d:
                        closed_at[i] = time.monotonic() - opened[i]
                        break
            except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                pass
            except OSError:
                closed_at[i] = time.monotonic() - opened[i]
        t = time.monotonic()
        try:
            st, _h, body = H.request(srv.port, "GET", "/small.txt", timeout=3)
            lat = time.monotonic() - t
            latencies.append(lat)
            if st != 200 or body != SMALL:
                failures.append((st, body[:80]))
        except Exception as e:
            failures.append(repr(e))
        time.sleep(0.2)
    H.log("# %d normal requests during slowloris: max latency %.3f s; slow connections closed by the "
          "server: %d of %d (first at %s s, last at %s s)"
          % (len(latencies), max(latencies or [0]), len(closed_at), N_SLOW,
             "%.1f" % min(closed_at.values()) if closed_at else "-",
             "%.1f" % max(closed_at.values()) if closed_at else "-"))
    R.check("during %d slowloris connections, normal requests all succeed in < 1 s" % N_SLOW,
            not failures and latencies and max(latencies) < 1.0,
            "failures %r, latencies max %.3f over %d" % (failures[:5], max(latencies or [0]), len(latencies)))
    R.check("slowloris connections are closed by the header timeout (%.0f s) within %.0f s"
            % (HEADER_TIMEOUT, HEADER_TIMEOUT + 4),
            len(closed_at) == N_SLOW and max(closed_at.values()) <= HEADER_TIMEOUT + 4,
            "%d of %d closed; close times %s"
            % (len(closed_at), N_SLOW, sorted(closed_at.values())[:3] + sorted(closed_at.values())[-3:]))
    early = [t for t in closed_at.values() if t < HEADER_TIMEOUT - 1.5]
    R.check("no slow connection closed well before the header timeout", not early,
            "%d closed before %.1f s: %r" % (len(early), HEADER_TIMEOUT - 1.5, sorted(early)[:5]))
    for s in slow:
        s.close()
    srv.stop_and_check(R, "server (slowloris) exits 0 on SIGTERM")


# ---------------------------------------------------------------------------
def kill_worker():
    srv = H.Server(DOC, workers=2, ready_path="/small.txt").start()
    workers = H.wait_until(lambda: len(srv.children()) == 2 and srv.children(), 5)
    R.check("--workers 2: two worker processes under the server pid %d" % srv.proc.pid,
            workers and len(workers) == 2, "children: %r" % srv.children())
    if not workers:
        return
    victim = workers[0]
    os.kill(victim, signal.SIGKILL)
    gone = H.wait_until(lambda: H.proc_state(victim) in (None, "Z", "X"), 3)
    R.check("killed worker %d is dead" % victim, gone, H.proc_state(victim))
    results = []
    for _ in range(20):
        try:
            st, _h, body = H.request(srv.port, "GET", "/small.txt", timeout=3)
            results.append(st if body == SMALL else ("body", st))
        except Exception as e:
            results.append(repr(e))
    R.check("after SIGKILL of one worker, 20 fresh requests all get 200", results == [200] * 20, results)
    t0 = time.monotonic()
    new = H.wait_until(lambda: [p for p in srv.children() if p not in workers], 5)
    R.check("a new worker appears within 5 s", bool(new),
            "children %r (before: %r); stderr: %s" % (srv.children(), workers, srv.stderr_text()[-600:]))
    if new:
        H.log("# new worker %r after %.2f s" % (new, time.monotonic() - t0))
        R.check("two workers again", len(srv.children()) == 2, srv.children())
        time.sleep(0.3)
        ok = 0
        for _ in range(20):
            try:
                st, _h, _b = H.request(srv.port, "GET", "/small.txt", timeout=3)
                ok += st == 200
            except Exception:
                pass
        R.check("with the restarted worker, 20 more requests all get 200", ok == 20, "%d of 20" % ok)
    srv.stop_and_check(R, "server (supervisor, 2 workers) exits 0 on SIGTERM")
    left = [p for p in workers + (new or []) if H.proc_state(p) not in (None, "Z", "X")]
    R.check("no worker outlives the supervisor", not left, left)


# ---------------------------------------------------------------------------
def sigterm_download():
    srv = H.Server(DOC, workers=1, ready_path="/small.txt").start()
    s = H.connect(srv.port, timeout=10, rcvbuf=64 * 1024)
    s.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        if not d:
            break
        buf += d
    head, _, body0 = buf.partition(b"\r\n\r\n")
    R.check("large download: 200 with Content-Length %d" % BIG_SIZE,
            head.startswith(b"HTTP/1.1 200") and (b"\r\ncontent-length: %d" % BIG_SIZE) in head.lower(), head)
    rate = 64 << 20  # bytes per second: slower than the server can send
    got, mismatch, sent_term, refused = 0, None, False, None
    f = open(BIG, "rb")
    t0 = time.monotonic()
    chunk = body0
    eof = False
    while True:
        if chunk:
            want = f.read(len(chunk))
            if mismatch is None and want != chunk:
                k = next(i for i in range(len(chunk)) if i >= len(want) or want[i] != chunk[i])
                mismatch = got + k
            got += len(chunk)
        if got >= BIG_SIZE:
            break
        if not sent_term and got >= 16 << 20:
            srv.proc.send_signal(signal.SIGTERM)
            sent_term = time.monotonic()
            # The listening socket closes at once: new connections are refused.
            def refused_now():
                try:
                    c = socket.create_connection((H.HOST, srv.port), timeout=1)
                    c.close()
                    return False
                except ConnectionRefusedError:
                    return True
                except OSError:
                    return False
            refused = H.wait_until(refused_now, 2, step=0.05)
        ahead = got / rate - (time.monotonic() - t0)
        if ahead > 0:
            time.sleep(ahead)
        try:
            chunk = s.recv(256 * 1024)
        except OSError as e:
            H.log("# recv error after %d bytes: %r" % (got, e))
            break
        if not chunk:
            eof = True
            break
    f.close()
    H.log("# downloaded %d bytes in %.1f s; SIGTERM sent at %.1f s"
          % (got, time.monotonic() - t0, (sent_term - t0) if sent_term else -1))
    R.check("SIGTERM was sent mid-download", bool(sent_term), got)
    R.check("after SIGTERM, new connections are refused (listening socket closed)", refused, refused)
    R.check("download completes byte-complete (%d bytes) after SIGTERM" % BIG_SIZE,
            got == BIG_SIZE and mismatch is None,
            "got %d of %d bytes, early EOF=%s, first differing byte at %s" % (got, BIG_SIZE, eof, mismatch))
    try:
        s.settimeout(3)
        tail = s.recv(1)
        R.check("then the server closes the connection", tail == b"", tail)
    except Exception as e:
        R.check("then the server closes the connection", False, repr(e))
    s.close()
    try:
        rc = srv.proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        rc = "still running 5 s after the download"
    R.check("server exits 0 after the in-flight download", rc == 0, "rc=%s stderr=%s" % (rc, srv.stderr_text()[-600:]))


# ---------------------------------------------------------------------------
def wrk_run():
    srv = H.Server(DOC, workers=2, ready_path="/small.txt").start()
    p = subprocess.run(["wrk", "-t1", "-c50", "-d3s", H.url(srv.port, "/small.txt")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=H.CLIENT_ENV, timeout=30)
    out = p.stdout.decode("utf-8", "replace")
    H.log("# wrk output:\n" + "\n".join("#   " + l for l in out.splitlines()))
    m = re.search(r"(\d+) requests in", out)
    n = int(m.group(1)) if m else 0
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    R.check("wrk -t1 -c50 -d3s completes (%d requests)" % n, p.returncode == 0 and n > 0, out)
    R.check("wrk: zero socket errors", sock is None or all(int(x) == 0 for x in sock.groups()),
            sock.group(0) if sock else out)
    R.check("wrk: zero non-2xx responses", non2xx is None, non2xx.group(0) if non2xx else out)
    srv.stop_and_check(R, "server (wrk) exits 0 on SIGTERM")


# ---------------------------------------------------------------------------
def _fields(raw):
    """The header fields of raw "Name: value\\r\\n" lines, as a dict."""
    return dict(l.split(": ", 1) for l in raw.decode("latin-1").split("\r\n") if l)


def gc_steady_state(args=(), what="", n=10_000, extra=b"", path="/small.txt", body_ok=None):
    """0 minor words per 200 and 304 in steady state, with the server's
    extra [args] ([what] names them) and [extra] request fields; [body_ok]
    checks a 200's body (default: it is SMALL)."""
    body_ok = body_ok or (lambda b: b == SMALL)
    srv = H.Server(DOC, workers=1, args=list(H.STATS_ARGS) + list(args), ready_path=path).start()
    st, h, _ = H.request(srv.port, "GET", path, headers=_fields(extra))
    etag = dict(h).get("etag")
    R.check("small file has an ETag%s" % what, st == 200 and etag, h)
    etag = etag or '"no-etag-in-response"'  # the 304 checks then fail, not crash
    get200 = b"GET " + path.encode() + b" HTTP/1.1\r\nHost: x\r\n" + extra + b"\r\n"
    get304 = (b"GET " + path.encode() + b" HTTP/1.1\r\nHost: x\r\n" + extra
              + ("If-None-Match: %s\r\n\r\n" % etag).encode())
    s = H.connect(srv.port)
    rd = H.Reader(s)

    def loop(req, n, want):
        bad = []
        for _ in range(n):
            s.sendall(req)
            r = rd.read_response(timeout=5)
            if r is None or r.status != want or (want == 200 and not body_ok(r.body)):
                bad.append(r)
                if len(bad) > 5:
                    break
        return bad

    loop(get200, 1500, 200)  # warm-up: past the server's 1000-request steady-state mark
    loop(get304, 1500, 304)
    s0 = srv.stats()
    t = time.monotonic()
    bad200 = loop(get200, n, 200)
    t200 = time.monotonic() - t
    s1 = srv.stats()
    t = time.monotonic()
    bad304 = loop(get304, n, 304)
    t304 = time.monotonic() - t
    s2 = srv.stats()
    s.close()
    R.check("%d keep-alive 200s all correct%s" % (n, what), not bad200, bad200[:3])
    R.check("%d keep-alive 304s all correct%s" % (n, what), not bad304, bad304[:3])
    for label, a, b, el in (("200", s0, s1, t200), ("304", s1, s2, t304)):
        H.check_no_words(R, label, a, b, n, what, seconds=el)
    srv.stop_and_check(R, "server (stats) exits 0 on SIGTERM")
    H.check_shutdown_words(R, srv, 3000 + 2 * n)


# Options that add work per request must keep it allocation-free: the
# access log (each format, with Referer and User-Agent to escape) and the
# compressed answers of --compress (made once, then served from the cache).
UA_FIELDS = b'Referer: http://a.example/?q="x"\r\nUser-Agent: t\\est \xe9agent\r\n'


def gc_with_access_log():
    for fmt in ("common", "combined", "json"):
        log = os.path.join(TMP, "access-%s.log" % fmt)
        gc_steady_state(["--access-log", log, "--log-format", fmt], " (--log-format %s)" % fmt,
                        n=3000, extra=UA_FIELDS)
        with open(log, "rb") as f:
            lines = f.read().splitlines()
        R.check("%s log: one line per request (%d)" % (fmt, len(lines)), len(lines) >= 9000, len(lines))
        lines = [l for l in lines if b"/__httpz/stats" not in l]
        last = lines[-1] if lines else b""
        if fmt == "json":
            try:
                o = json.loads(last)
            except ValueError as e:
                o = {"error": str(e)}
            R.check("json log line parses, fields escaped", o.get("referer") == 'http://a.example/?q="x"'
                    and o.get("user_agent") == "t\\est \xe9agent" and o.get("status") == 304
                    and isinstance(o.get("request_time_us"), int), last)
        elif fmt == "combined":
            R.check("combined log line: referer and agent escaped, time last",
                    re.search(rb'" 304 - "http://a.example/\?q=\\x22x\\x22" "t\\x5Cest \\xE9agent" \d+$', last),
                    last)
        else:
            R.check("common log line: request, status, time in us", re.search(rb'"GET /small.txt HTTP/1.1" 304 - \d+$', last), last)


def gc_with_compress():
    gc_steady_state(["--compress"], " (--compress, gzip accepted)", n=3000,
                    extra=b"Accept-Encoding: gzip\r\n",
                    body_ok=lambda b: b[:2] == b"\x1f\x8b" and gzip.decompress(b) == SMALL)


try:
    part("10,000 concurrent keep-alive connections", many_connections)
    part("idle memory and the connection limit", idle_memory_and_limit)
    part("slowloris", slowloris)
    part("SIGKILL a worker", kill_worker)
    part("SIGTERM during a large download", sigterm_download)
    part("wrk", wrk_run)
    part("steady-state GC", gc_steady_state)
    part("steady-state GC with each access log format", gc_with_access_log)
    part("steady-state GC with --compress", gc_with_compress)
except Exception:
    R.check("suite ran without an exception", False, traceback.format_exc())
finally:
    R.finish()
