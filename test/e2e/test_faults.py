"""Fault injection against the real `httpz serve`, all on 127.0.0.1.

Each fault is a check that prints what was observed. After every fault the
server must still answer a normal request promptly and its open-fd count
(/proc/PID/fd, --workers 1 so the server is one process) must come back to
the baseline taken before the faults (no leaked socket or file descriptor).

1. Client resets (SO_LINGER 0 close) in the middle of a 50 MiB download.
2. Client never reads a 50 MiB response: closed after --write-timeout,
   other clients unaffected meanwhile.
3. File truncated (50 MiB -> 1 MiB) while being sent: short body, then EOF.
   File deleted while being sent: the open descriptor keeps the data, the
   response ends (whole) with no hang.
4. A FIFO, a character device (mknod, skipped when not permitted), a symlink
   to /dev/null (outside the root), an unreadable file: 403/404 without
   blocking. As root (which reads a chmod 000 file anyway), 4b starts a
   second server as nobody (setpriv) on chmod 000 files, big and small, and
   a chmod 000 directory: 403, no byte of them, listings leave them out.
5. A directory of 100,000 entries with --list: at most --list-max (1000)
   entries read and shown, with a note, answered in < 0.5 s.
6. A 0-byte file: 200, Content-Length: 0, empty body; HEAD too.
7. A sparse 5 GiB file: suffix ranges near the end are exact; HEAD shows
   Content-Length 5368709120.
8. Out of descriptors (prlimit --nofile=64:64): open connections keep being
   served while accept fails, the server does not spin, and it accepts again
   once connections close.

Run: python3 test/e2e/test_faults.py   (needs _build/install/default/bin/httpz, prlimit)
The last line is `N passed, N failed`.
"""

import os
import shutil
import socket
import stat
import struct
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("faults")
H.suite_deadline(R, 85)
H.require_binary(R)
H.raise_nofile(65536)

BIG = 50 << 20
HUGE = 5 << 30  # 5368709120
WRITE_TIMEOUT = 2.0

# The docroot goes to tmpfs when there is one: creating (and removing) the
# 100,000 entries of fault 5 takes about a second there but from 5 s to over
# a minute on a busy ext4. The big files are sparse, so they cost no memory.
SHM = "/dev/shm"
TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-faults-",
                                 dir=SHM if os.path.isdir(SHM) and os.access(SHM, os.W_OK) else None))
DOC = os.path.join(TMP, "root")
os.mkdir(DOC)
SMALL = b"a small file served from the in-memory cache\n" * 10
with open(os.path.join(DOC, "small.txt"), "wb") as f:
    f.write(SMALL)


def make_big(name, size=BIG):
    """A sparse file with a marker every MiB (never cached: > 64 KiB)."""
    path = os.path.join(DOC, name)
    with open(path, "wb") as f:
        f.truncate(size)
        for off in range(0, size, 1 << 20):
            f.seek(off)
            f.write(b"<MiB %08d>" % (off >> 20))
    return path


def part(name, fn):
    H.part(R, name, fn)


def fd_count(srv):
    try:
        return len(os.listdir("/proc/%d/fd" % srv.proc.pid))
    except OSError:
        return -1


def send_get(port, path, rcvbuf=None, extra=""):
    s = H.connect(port, timeout=5, rcvbuf=rcvbuf)
    s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n%s\r\n" % (path, extra)).encode())
    return s


def read_head(s, timeout=5.0):
    """(status, headers dict, body bytes already received)."""
    deadline = time.monotonic() + timeout
    buf = b""
    while b"\r\n\r\n" not in buf:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        d = s.recv(65536)
        if not d:
            raise H.ProtocolError("EOF before the head: %r" % buf[:200])
        buf += d
    i = buf.index(b"\r\n\r\n")
    lines = buf[:i].decode("latin-1").split("\r\n")
    h = {}
    for l in lines[1:]:
        k, v = l.split(":", 1)
        h[k.strip().lower()] = v.strip()
    return int(lines[0].split()[1]), h, buf[i + 4:]


def read_until(s, have, n, timeout):
    """Read until [have] reaches n bytes. Returns the count (bytes are dropped)."""
    deadline = time.monotonic() + timeout
    while have < n:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        d = s.recv(1 << 20)
        if not d:
            break
        have += len(d)
    return have


def drain_to_end(s, timeout):
    """Read until EOF or reset. Returns (bytes, how it ended) — 'eof', 'reset' or 'timeout'."""
    deadline = time.monotonic() + timeout
    n = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return n, "timeout"
        s.settimeout(left)
        try:
            d = s.recv(1 << 20)
        except socket.timeout:
            return n, "timeout"
        except ConnectionResetError:
            return n, "reset"
        if not d:
            return n, "eof"
        n += len(d)


class Main:
    srv = None
    baseline = None


def healthy(label):
    """The server answers a normal request promptly and its fds are back to baseline."""
    srv = Main.srv
    t0 = time.monotonic()
    try:
        status, _h, body = H.request(srv.port, "GET", "/small.txt", timeout=3)
    except OSError as e:
        status, body = None, repr(e)
    dt = time.monotonic() - t0
    R.check("after %s: normal GET answered 200 in < 1 s (%.3f s)" % (label, dt),
            srv.alive() and status == 200 and body == SMALL and dt < 1.0,
            "alive=%s status=%s body=%r stderr=%s" % (srv.alive(), status, body[:100],
                                                       srv.stderr_text()[-600:]))
    n = H.wait_until(lambda: fd_count(srv) <= Main.baseline and fd_count(srv), 3.0)
    R.check("after %s: server fds back to baseline %d (now %d)" % (label, Main.baseline, fd_count(srv)),
            n and n <= Main.baseline, "fds: %s" % sorted(
                os.readlink("/proc/%d/fd/%s" % (srv.proc.pid, x))
                for x in os.listdir("/proc/%d/fd" % srv.proc.pid)))


# ---------------------------------------------------------------------------
def start_main():
    Main.srv = H.Server(DOC, workers=1, ready_path="/small.txt",
                        args=["--list", "--write-timeout", "%g" % WRITE_TIMEOUT]).start()
    for _ in range(3):
        H.request(Main.srv.port, "GET", "/small.txt")
    time.sleep(0.2)
    Main.baseline = fd_count(Main.srv)
    H.log("# main server pid %d, baseline fds %d" % (Main.srv.proc.pid, Main.baseline))


def reset_mid_response():
    make_big("reset.bin")
    s = send_get(Main.srv.port, "/reset.bin")
    status, h, body = read_head(s)
    got = read_until(s, len(body), 1 << 20, 5)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
    H.log("# reset after %d of %d body bytes (status %d)" % (got, BIG, status))
    R.check("reset: download started (200, %d bytes read before the RST)" % got,
            status == 200 and got >= 1 << 20 and h.get("content-length") == str(BIG), (status, h, got))
    healthy("client reset mid-response")


def write_stall():
    make_big("stall.bin")
    srv = Main.srv
    s = send_get(srv.port, "/stall.bin", rcvbuf=4096)
    t0 = time.monotonic()
    time.sleep(0.5)
    during = fd_count(srv)
    status, _h, body = H.request(srv.port, "GET", "/small.txt", timeout=2)
    dt_other = time.monotonic() - t0 - 0.5
    R.check("write stall: another client is answered meanwhile (%.3f s)" % dt_other,
            status == 200 and body == SMALL and dt_other < 1.0, (status, body[:80]))
    R.check("write stall: stalled connection still open before the timeout (%d fds, baseline %d)"
            % (during, Main.baseline), during >= Main.baseline + 1, during)
    n = H.wait_until(lambda: fd_count(srv) <= Main.baseline, WRITE_TIMEOUT + 4)
    dt = time.monotonic() - t0
    H.log("# stalled connection released by the server after %.2f s (write timeout %g s)"
          % (dt, WRITE_TIMEOUT))
    R.check("write stall: server closes the stalled connection after the write timeout "
            "(%.2f s, timeout %g s)" % (dt, WRITE_TIMEOUT),
            n and WRITE_TIMEOUT * 0.75 <= dt <= WRITE_TIMEOUT + 3, "fds %d after %.2f s" % (fd_count(srv), dt))
    got, how = drain_to_end(s, 10)
    s.close()
    H.log("# stalled client then read %d bytes and saw %s" % (got, how))
    R.check("write stall: client then sees the end of the connection (%s after %d bytes)" % (how, got),
            how in ("eof", "reset") and got < BIG, (got, how))
    healthy("write stall")


def truncated_while_sent():
    path = make_big("trunc.bin")
    s = send_get(Main.srv.port, "/trunc.bin", rcvbuf=256 << 10)
    status, h, body = read_head(s)
    got = read_until(s, len(body), 2 << 20, 5)
    os.truncate(path, 1 << 20)
    t0 = time.monotonic()
    more, how = drain_to_end(s, 10)
    s.close()
    total = got + more
    H.log("# truncated: got %d of %d announced bytes, then %s after %.2f s"
          % (total, BIG, how, time.monotonic() - t0))
    R.check("truncated while sent: short body then EOF, no hang (%d bytes, %s)" % (total, how),
            status == 200 and how in ("eof", "reset") and total < BIG, (status, h, total, how))
    healthy("file truncated while sent")


def deleted_while_sent():
    path = make_big("deleted.bin")
    s = send_get(Main.srv.port, "/deleted.bin", rcvbuf=256 << 10)
    status, h, body = read_head(s)
    got = read_until(s, len(body), 2 << 20, 5)
    os.unlink(path)
    t0 = time.monotonic()
    total = read_until(s, got, BIG, 15)
    more, how = drain_to_end(s, 0.3) if total >= BIG else drain_to_end(s, 5)
    s.close()
    H.log("# deleted: got %d of %d bytes, then %s after %.2f s"
          % (total + more, BIG, how, time.monotonic() - t0))
    # The open descriptor keeps the data: the whole body is the expected
    # outcome; a short body must at least end in EOF/reset rather than hang.
    R.check("deleted while sent: response ends without a hang (%d bytes, then %s)" % (total + more, how),
            status == 200 and (total == BIG and more == 0 and how in ("timeout", "eof"))
            or (total < BIG and how in ("eof", "reset")), (status, total, more, how))
    st, _h, _b = H.request(Main.srv.port, "GET", "/deleted.bin", timeout=3)
    R.check("deleted file now answers 404 (%s)" % st, st == 404, st)
    healthy("file deleted while sent")


def special_files():
    port = Main.srv.port

    def probe(name, path):
        t0 = time.monotonic()
        try:
            st, _h, _b = H.request(port, "GET", path, timeout=3)
        except OSError as e:
            st = repr(e)
        dt = time.monotonic() - t0
        H.log("# %s %s -> %s in %.3f s" % (name, path, st, dt))
        R.check("%s answers 403/404 without blocking (%s in %.3f s)" % (name, st, dt),
                st in (403, 404) and dt < 1.5, st)

    os.mkfifo(os.path.join(DOC, "fifo"))
    probe("FIFO", "/fifo")
    try:
        os.mknod(os.path.join(DOC, "null"), stat.S_IFCHR | 0o666, os.makedev(1, 3))
        probe("character device (mknod 1,3)", "/null")
    except OSError as e:
        H.log("# SKIP character device via mknod: %s (needs CAP_MKNOD)" % e)
    os.symlink("/dev/null", os.path.join(DOC, "devnull-link"))
    probe("symlink to /dev/null (outside the root)", "/devnull-link")
    locked = os.path.join(DOC, "locked.txt")
    with open(locked, "wb") as f:
        f.write(b"secret\n" * 20000)  # > 64 KiB: goes to open(2), not only the cache
    os.chmod(locked, 0)
    if os.geteuid() == 0:
        H.log("# unreadable file: root reads it anyway, so the next part runs a server as nobody")
    else:
        probe("unreadable file (chmod 000)", "/locked.txt")
    healthy("special files")


NOBODY = 65534


def unreadable_unprivileged():
    """chmod 000 files and a chmod 000 directory, served by a server that
    runs as nobody (setpriv from util-linux): root would read them anyway.
    The binary is copied next to the docroot, so nobody can run it
    wherever the checkout lives."""
    if os.geteuid() != 0:
        H.log("# not root: the unreadable file was probed on the main server")
        return
    base = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-nobody-"))
    os.chmod(base, 0o755)
    exe = os.path.join(base, "httpz")
    shutil.copy(H.BIN, exe)
    os.chmod(exe, 0o755)
    doc = os.path.join(base, "root")
    os.mkdir(doc)
    os.chmod(doc, 0o755)
    files = {"open.txt": (b"readable by everyone\n", 0o644),
             "locked-big.txt": (b"secret\n" * 20000, 0),    # > 64 KiB: open(2) + sendfile path
             "locked-small.txt": (b"small secret\n", 0)}    # cache-sized: the cache insert path
    for name, (data, mode) in files.items():
        path = os.path.join(doc, name)
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, mode)
    sub = os.path.join(doc, "lockeddir")
    os.mkdir(sub)
    with open(os.path.join(sub, "inside.txt"), "wb") as f:
        f.write(b"behind a closed directory\n")
    os.chmod(os.path.join(sub, "inside.txt"), 0o644)
    os.chmod(sub, 0)
    srv = H.Server(doc, workers=1, args=["--list"], ready_path="/open.txt", binary=exe,
                   prefix=["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
                           "--clear-groups"]).start()
    try:
        uid = None
        with open("/proc/%d/status" % srv.proc.pid) as f:
            for line in f:
                if line.startswith("Uid:"):
                    uid = int(line.split()[1])
        R.check("the second server runs as nobody (uid %s)" % uid, uid == NOBODY, uid)
        st, _h, body = H.request(srv.port, "GET", "/open.txt", timeout=3)
        R.check("readable file: 200 (%s)" % st, st == 200 and body == files["open.txt"][0], st)
        for path in ("/locked-big.txt", "/locked-small.txt", "/lockeddir/inside.txt",
                     "/lockeddir/", "/lockeddir"):
            t0 = time.monotonic()
            st, _h, body = H.request(srv.port, "GET", path, timeout=3)
            dt = time.monotonic() - t0
            leaked = b"secret" in body or b"behind" in body or doc.encode() in body
            R.check("%s: 403 with no byte of it and no path (%s in %.3f s)" % (path, st, dt),
                    st == 403 and not leaked and dt < 1.5, (st, body[:80]))
        st, _h, body = H.request(srv.port, "GET", "/", timeout=3)
        # Listings leave out what the server cannot open (server/static.mli).
        R.check("listing of the root (%s): open.txt listed, the locked entries left out" % st,
                st == 200 and b"open.txt" in body and b"locked-big.txt" not in body
                and b"lockeddir" not in body, (st, body[:200]))
        st, _h, _b = H.request(srv.port, "GET", "/open.txt", timeout=3)
        R.check("still serving after the refusals (%s)" % st, st == 200, st)
    finally:
        srv.stop()


def huge_directory():
    d = os.path.join(DOC, "many")
    os.mkdir(d)
    t0 = time.monotonic()
    for i in range(100_000):
        os.close(os.open(os.path.join(d, "entry-%06d.txt" % i), os.O_CREAT | os.O_WRONLY, 0o644))
    H.log("# created 100,000 files in %.1f s" % (time.monotonic() - t0))
    t0 = time.monotonic()
    try:
        st, h, body = H.request(Main.srv.port, "GET", "/many/", timeout=15)
    except OSError as e:
        st, h, body = repr(e), [], b""
    dt = time.monotonic() - t0
    H.log("# listing of 100,000 entries: %s, %d bytes in %.2f s" % (st, len(body), dt))
    text = body.decode("utf-8", "replace")
    # The listing is built on the event loop: it reads at most --list-max
    # (1000 by default) entries, so it cannot stall the worker's other
    # clients for long (100,000 entries took 1.2 s when it read them all).
    R.check("100,000-entry listing answered 200 in < 0.5 s (%.3f s, %d bytes)" % (dt, len(body)),
            st == 200 and dt < 0.5, (st, dt))
    shown = text.count("<tr><td><a href=\"entry-")
    R.check("listing shows 1000 entries (%d) and says it was cut, closed HTML" % shown,
            shown == 1000 and "more entries than the 1000 shown" in text
            and "</html>" in text[-200:].lower(), text[:300] + " ... " + text[-300:])
    healthy("100,000-entry listing")
    shutil.rmtree(d, ignore_errors=True)


def empty_file():
    open(os.path.join(DOC, "empty.txt"), "wb").close()
    st, h, body = H.request(Main.srv.port, "GET", "/empty.txt")
    h = dict(h)
    R.check("0-byte file: GET 200, Content-Length: 0, empty body",
            st == 200 and h.get("content-length") == "0" and body == b"", (st, h, body))
    st, h, body = H.request(Main.srv.port, "HEAD", "/empty.txt")
    h = dict(h)
    R.check("0-byte file: HEAD 200, Content-Length: 0",
            st == 200 and h.get("content-length") == "0" and body == b"", (st, h, body))
    healthy("0-byte file")


def huge_file():
    path = os.path.join(DOC, "huge.bin")
    tail = b"0123456789abcdefghijklmnopqrstuvwxyz-END-OF-5GiB"
    with open(path, "wb") as f:
        f.truncate(HUGE)
        f.seek(HUGE - len(tail))
        f.write(tail)
    assert os.path.getsize(path) == HUGE
    port = Main.srv.port
    st, h, body = H.request(port, "GET", "/huge.bin", headers={"Range": "bytes=-16"})
    h = dict(h)
    R.check("5 GiB file: bytes=-16 -> 206 with the last 16 bytes",
            st == 206 and body == tail[-16:]
            and h.get("content-range") == "bytes %d-%d/%d" % (HUGE - 16, HUGE - 1, HUGE)
            and h.get("content-length") == "16", (st, h, body))
    st, h, body = H.request(port, "GET", "/huge.bin", headers={"Range": "bytes=5368709100-"})
    h = dict(h)
    R.check("5 GiB file: bytes=5368709100- -> 206 with the last 20 bytes",
            st == 206 and body == tail[-20:]
            and h.get("content-range") == "bytes 5368709100-5368709119/5368709120"
            and h.get("content-length") == "20", (st, h, body))
    st, h, body = H.request(port, "GET", "/huge.bin", headers={"Range": "bytes=5368709110-5368709113"})
    h = dict(h)
    R.check("5 GiB file: bytes=5368709110-5368709113 -> 206 with those 4 bytes",
            st == 206 and body == tail[-10:-6]
            and h.get("content-range") == "bytes 5368709110-5368709113/5368709120", (st, h, body))
    st, h, body = H.request(port, "HEAD", "/huge.bin")
    h = dict(h)
    R.check("5 GiB file: HEAD 200 with Content-Length 5368709120",
            st == 200 and h.get("content-length") == str(HUGE), (st, h))
    os.unlink(path)
    healthy("5 GiB file ranges")


def stop_main():
    Main.srv.stop_and_check(R, "main server exits 0 on SIGTERM after all faults")


# ---------------------------------------------------------------------------
def out_of_fds():
    if not shutil.which("prlimit"):
        R.check("prlimit available", False, "prlimit (util-linux) is missing")
        return
    # More connections allowed than descriptors: accept4 meets EMFILE.
    srv = H.Server(DOC, workers=1, ready_path="/small.txt", args=H.STATS_ARGS + ["--max-connections", "1000"],
                   prefix=["prlimit", "--nofile=64:64", "--"]).start()
    try:
        with open("/proc/%d/limits" % srv.proc.pid) as f:
            lim = [l for l in f if l.startswith("Max open files")]
        H.log("# server pid %d: %s" % (srv.proc.pid, lim[0].strip() if lim else "?"))
        for _ in range(2):
            H.request(srv.port, "GET", "/small.txt")
        time.sleep(0.2)
        base = fd_count(srv)
        keep = H.connect(srv.port)
        keep_r = H.Reader(keep)
        req = b"GET /small.txt HTTP/1.1\r\nHost: x\r\n\r\n"
        stats_req = b"GET /__httpz/stats HTTP/1.1\r\nHost: x\r\n%s\r\n\r\n" % H.STATS_AUTH.encode()
        keep.sendall(req)
        r = keep_r.read_response(timeout=3)
        R.check("EMFILE: keep-alive connection served before the flood", r and r.status == 200, r)
        extra = []
        # Plain TCP connections, also over TLS: most of them wait in the
        # accept queue, where no handshake could complete.
        for _ in range(100):
            extra.append(socket.create_connection((H.HOST, srv.port), timeout=5))
        full = H.wait_until(lambda: fd_count(srv) >= 64, 3)
        n_full = fd_count(srv)
        H.log("# server fds with 100 extra connections: %d (limit 64, baseline %d)" % (n_full, base))
        R.check("EMFILE: server reached its descriptor limit (%d fds)" % n_full, full, n_full)

        def cpu():
            with open("/proc/%d/stat" % srv.proc.pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

        c0, t0 = cpu(), time.monotonic()
        # /__httpz/stats needs no descriptor; /small.txt is answered from the
        # cache, which re-opens it once a second to revalidate: at the limit
        # that open fails with EMFILE and the cached copy is served anyway.
        stats_ok, seen = 0, []
        for i in range(6):
            keep.sendall(req if i % 2 else stats_req)
            r = keep_r.read_response(timeout=3)
            if i % 2:
                seen.append(r.status if r else None)
            else:
                stats_ok += bool(r and r.status == 200 and b'"requests"' in r.body)
            time.sleep(0.2)
        c1, t1 = cpu(), time.monotonic()
        share = (c1 - c0) / (t1 - t0)
        H.log("# at the limit: %d/3 stats requests answered 200, /small.txt answered %s; "
              "server CPU %.0f%% over %.1f s" % (stats_ok, seen, share * 100, t1 - t0))
        R.check("EMFILE: existing connection keeps being served (stats 200 %d/3)" % stats_ok,
                stats_ok == 3, srv.stderr_text()[-500:])
        R.check("EMFILE: cached file on the existing connection answered 200 (%s)" % seen,
                all(x == 200 for x in seen), seen)
        R.check("EMFILE: server backs off instead of spinning (CPU %.0f%%)" % (share * 100),
                share < 0.5, share)
        for s in extra:
            s.close()
        t0 = time.monotonic()
        st = None
        while time.monotonic() - t0 < 5 and st != 200:
            try:
                st, _h, _b = H.request(srv.port, "GET", "/small.txt", timeout=2)
            except OSError:
                time.sleep(0.1)
        dt = time.monotonic() - t0
        R.check("EMFILE: after the extra connections close, a new one is accepted (%.2f s)" % dt,
                st == 200 and dt < 3, (st, dt, srv.stderr_text()[-500:]))
        keep.close()
        n = H.wait_until(lambda: fd_count(srv) <= base, 3)
        R.check("EMFILE: server fds back to baseline %d (now %d)" % (base, fd_count(srv)), n, fd_count(srv))
        n_logged = srv.stderr_text().count("accept:")
        R.check("EMFILE: accept failure logged on stderr (%d line(s))" % n_logged,
                n_logged >= 1, srv.stderr_text()[-500:])
    finally:
        srv.stop_and_check(R, "server under prlimit exits 0 on SIGTERM")


# ---------------------------------------------------------------------------
def uring_forbidden():
    """--io uring where the kernel refuses io_uring (a seccomp filter, as in
    a container): one line in the log, then the same service over epoll."""
    srv = H.Server(DOC, workers=1, ready_path="/small.txt", args=H.STATS_ARGS + ["--io", "uring"],
                   preexec=H.forbid_io_uring).start()
    st, _h, body = H.request(srv.port, "GET", "/small.txt")
    R.check("io_uring forbidden: the file is served", st == 200 and body == SMALL, st)
    R.check("... over epoll (stats)", srv.stats().get("io") == "epoll", srv.stats())
    lines = [l for l in srv.stderr_text().splitlines() if "io_uring" in l]
    R.check("... after one log line saying why", len(lines) == 1 and "serving with epoll" in lines[0]
            and "EPERM" in lines[0].upper().replace("OPERATION NOT PERMITTED", "EPERM"), lines)
    srv.stop_and_check(R, "server (io_uring forbidden) exits 0")
    srv = H.Server(DOC, workers=1, ready_path="/small.txt", args=H.STATS_ARGS + ["--io", "uring"]).start()
    R.check("without the filter, --io uring serves over io_uring", srv.stats().get("io") == "uring",
            srv.stats())
    srv.stop_and_check(R, "server (io_uring) exits 0")


T0 = time.monotonic()
part("start main server", start_main)
if Main.srv is not None and Main.baseline is not None:
    part("1. client reset mid-response", reset_mid_response)
    part("2. client never reads (write stall)", write_stall)
    part("3a. file truncated while sent", truncated_while_sent)
    part("3b. file deleted while sent", deleted_while_sent)
    part("4. FIFO, device, unreadable file", special_files)
    part("4b. unreadable files and directory, server running as nobody", unreadable_unprivileged)
    part("5. directory of 100,000 entries", huge_directory)
    part("6. 0-byte file", empty_file)
    part("7. file larger than 4 GiB", huge_file)
    part("stop main server", stop_main)
H._stop_all_servers()
part("8. out of file descriptors", out_of_fds)
part("9. io_uring forbidden", uring_forbidden)
H.log("# whole suite took %.1f s" % (time.monotonic() - T0))
for srv in list(H._servers):
    try:
        os.unlink(srv.stderr_path)
    except OSError:
        pass
R.finish()
