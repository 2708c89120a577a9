"""The red-team findings and first-contact bugs of `httpz serve` (issue 11),
each against the real server on 127.0.0.1.

1. Dotfiles through symlinks: with gitlink -> .git and envlink -> .env,
   /gitlink/config, /gitlink/, /envlink are 404 like /.git/config; a listing
   leaves the links out.
2. --max-age: the 301 to a directory's slash carries Cache-Control too.
3. X-Content-Type-Options: nosniff on every kind of answer (200, 304, 301,
   404, 405, 414, the server's own 400).
4. A path over 4096 bytes: 414, not 400.
5. A second server on a port already served (by 1 or 2 workers): non-zero
   exit, "address already in use"; the first one keeps serving.
6. --user nobody: workers run as nobody, the supervisor stays root (it
   needs root to reload); with --workers 1 too; a chmod 000 file is 403;
   started as root without --user, the server warns.
7. SIGHUP reopens the access log (logrotate: rename, HUP, new file) and the
   server keeps serving, with a new generation of workers.
11. (issue 20) SIGHUP under --user nobody with the access log in a
   root-only (0700) directory: the supervisor, still root, reopens it; new
   requests go to the new file; no request is lost across reloads (clients
   looping through them); workers stay nobody; the supervisor's descriptors
   are the same after 10 reloads.
12. (issue 20) A --header over half the write buffer (16.5 KB) exits 2 at
   once with one line; one just under the bound serves.
8. --grace: a download in progress at SIGTERM is cut after --grace 1; with
   --grace 6 it completes.
9. --host localhost serves on 127.0.0.1.
10. A worker killed with SIGKILL: the restart line names SIGKILL.

Run: python3 test/e2e/test_redteam.py   (needs _build/install/default/bin/httpz)
The last line is `N passed, N failed`.
"""

import os
import pwd
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("redteam")
H.suite_deadline(R, 160)
H.require_binary(R)

TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-redteam-"))
os.chmod(TMP, 0o755)
DOC = os.path.join(TMP, "root")
os.mkdir(DOC)
os.chmod(DOC, 0o755)


def write(rel, data, mode=0o644):
    H.write_file(DOC, rel, data, mode)


write("index.html", b"<p>index</p>\n")
write(".git/config", b"[core]\nSECRET-GIT\n")
write(".env", b"SECRET-ENV\n")
write("sub/page.html", b"<p>sub</p>\n")
write("big.bin", os.urandom(1 << 20) * 48)  # 48 MiB, for --grace
write("locked.txt", b"SECRET-LOCKED\n", 0)
os.chmod(os.path.join(DOC, ".git"), 0o755)
os.chmod(os.path.join(DOC, "sub"), 0o755)
os.symlink(".git", os.path.join(DOC, "gitlink"))
os.symlink(".env", os.path.join(DOC, "envlink"))
os.symlink(".git/config", os.path.join(DOC, "configlink"))


def raw(port, data, timeout=5):
    s = H.connect(port, timeout=timeout)
    try:
        s.sendall(data)
        return H.Reader(s).read_response(timeout=timeout)
    finally:
        s.close()


def get(port, path, headers=None):
    return H.request(port, "GET", path, headers=headers)


def dotfiles(srv):
    for path in ["/.git/config", "/gitlink/config", "/gitlink/", "/gitlink", "/envlink",
                 "/configlink", "/.env"]:
        st, _, body = get(srv.port, path)
        R.check("%s: 404, no secret (%s)" % (path, st), st == 404 and b"SECRET" not in body, (st, body[:100]))
    st, _, body = get(srv.port, "/")
    R.check("the index is still served", st == 200 and body == b"<p>index</p>\n", st)


def listing_leaves_links_out():
    srv = H.Server(DOC, workers=1, args=["--list"]).start()
    try:
        os.rename(os.path.join(DOC, "index.html"), os.path.join(DOC, "index.off"))
        time.sleep(1.1)  # the cache re-checks within a second
        st, _, body = get(srv.port, "/")
        text = body.decode("utf-8", "replace")
        R.check("listing (%s) shows sub/ and leaves gitlink, envlink, configlink out" % st,
                st == 200 and "sub/" in text and "gitlink" not in text and "envlink" not in text
                and "configlink" not in text and ".git" not in text, text[:600])
    finally:
        os.rename(os.path.join(DOC, "index.off"), os.path.join(DOC, "index.html"))
        srv.stop()


def headers_and_statuses(srv):
    def nosniff(label, r_headers):
        d = {k.lower(): v for k, v in r_headers}
        R.check("nosniff on %s" % label, d.get("x-content-type-options") == "nosniff", r_headers)

    st, h, _ = get(srv.port, "/index.html")
    nosniff("200", h)
    etag = dict((k.lower(), v) for k, v in h).get("etag")
    st, h, _ = get(srv.port, "/index.html", {"If-None-Match": etag})
    R.check("304 for the same ETag", st == 304, st)
    nosniff("304", h)
    st, h, _ = get(srv.port, "/sub")
    d = {k.lower(): v for k, v in h}
    R.check("301 to the slash (%s, %s)" % (st, d.get("location")), st == 301 and d.get("location") == "/sub/", h)
    R.check("--max-age: the 301 carries Cache-Control (%s)" % d.get("cache-control"),
            d.get("cache-control") == "max-age=60", h)
    nosniff("301", h)
    st, h, _ = get(srv.port, "/nothing")
    nosniff("404", h)
    st, h, _ = H.request(srv.port, "POST", "/index.html")
    nosniff("405", h)
    long_path = "/" + "a" * 5000
    st, h, _ = get(srv.port, long_path)
    R.check("a 5000-byte path: 414 (%s)" % st, st == 414, st)
    nosniff("414", h)
    r = raw(srv.port, b"GET / HTTP/1.1\r\nHost: x\r\nBad Name: y\r\n\r\n")
    R.check("malformed request: 400", r.status == 400, r)
    nosniff("the server's own 400", r.headers)


def exclusive_port():
    for first_workers, second_workers in [(2, 2), (1, 1), (2, 1)]:
        a = H.Server(DOC, workers=first_workers).start()
        try:
            p = subprocess.run([H.BIN, "serve", "-d", DOC, "-p", str(a.port), "--host", H.HOST,
                                "--workers", str(second_workers)],
                               capture_output=True, timeout=10)
            err = p.stderr.decode("utf-8", "replace")
            R.check("second server (%d workers) on a port served by %d: exit %d, address in use"
                    % (second_workers, first_workers, p.returncode),
                    p.returncode != 0 and "address already in use" in err.lower(), err[-400:])
            ok = all(get(a.port, "/index.html")[0] == 200 for _ in range(20))
            R.check("... and the first one serves every request", ok)
        finally:
            a.stop()


def ids(pid):
    """(real, effective, saved) uids and gids of [pid]."""
    uid = gid = None
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Uid:"):
                uid = tuple(int(x) for x in line.split()[1:4])
            elif line.startswith("Gid:"):
                gid = tuple(int(x) for x in line.split()[1:4])
    return uid, gid


def workers_of(srv, n):
    return H.wait_until(lambda: len(srv.children()) == n and srv.children(), 5) or srv.children()


def check_identities(srv, n, when):
    """Workers run as nobody (every uid and gid), the supervisor as root."""
    pw = pwd.getpwnam("nobody")
    pids = workers_of(srv, n)
    workers = [ids(p) for p in pids]
    R.check("%s: %d workers run as nobody, uids and gids (%s)" % (when, n, workers),
            len(workers) == n and all(u == (pw.pw_uid,) * 3 and g == (pw.pw_gid,) * 3
                                      for u, g in workers), workers)
    sup = ids(srv.proc.pid)
    R.check("%s: the supervisor stays root (%s)" % (when, sup), sup[0] == (0, 0, 0), sup)


def user_nobody():
    if os.geteuid() != 0:
        H.log("# not root: --user cannot be tested")
        return
    for n in (2, 1):
        srv = H.Server(DOC, workers=n, args=["--user", "nobody"], ready_path="/index.html").start()
        try:
            check_identities(srv, n, "--user nobody --workers %d" % n)
            st, _, body = get(srv.port, "/locked.txt")
            R.check("chmod 000 file: 403 (%s)" % st, st == 403 and b"SECRET" not in body, (st, body[:80]))
            R.check("no 'serving as root' warning with --user", "serving as root" not in srv.stderr_text())
        finally:
            srv.stop_and_check(R, "--user nobody --workers %d: exits 0 on SIGTERM" % n)
    srv = H.Server(DOC, workers=1).start()
    srv.stop()
    R.check("as root without --user: a warning", "serving as root" in srv.stderr_text(), srv.stderr_text()[-300:])


def sighup_reopens_log():
    log = os.path.join(TMP, "access.log")
    srv = H.Server(DOC, workers=2, args=["--access-log", log]).start()
    try:
        before = sorted(srv.children())
        for _ in range(4):
            get(srv.port, "/index.html?before")
        time.sleep(1.2)  # lines are flushed once a second
        os.rename(log, log + ".1")
        os.kill(srv.proc.pid, signal.SIGHUP)
        time.sleep(0.5)
        for _ in range(4):
            get(srv.port, "/index.html?after")
        time.sleep(1.3)
        new = open(log).read() if os.path.exists(log) else ""
        old = open(log + ".1").read()
        R.check("SIGHUP: a new access log at the path has the later requests",
                "?after" in new and "?before" not in new, new[:300])
        R.check("... the rotated file keeps the earlier ones", "?before" in old and "?after" not in old, old[:300])
        after = workers_of(srv, 2)
        R.check("... a new generation of workers serves, the previous one has exited",
                len(after) == 2 and not set(after) & set(before) and srv.alive(), (before, after))
    finally:
        srv.stop_and_check(R, "exits 0 on SIGTERM after SIGHUP")


def hup_and_wait(srv, n, reloads_before):
    """SIGHUP, then wait until the supervisor logged the reload and only
    the new generation's [n] workers are left."""
    os.kill(srv.proc.pid, signal.SIGHUP)
    done = H.wait_until(lambda: srv.stderr_text().count("SIGHUP: ") > reloads_before, 10)
    H.wait_until(lambda: len(srv.children()) == n, 10)
    return bool(done)


def reload_under_user():
    """Issue 20: the supervisor keeps root, so SIGHUP under --user reopens
    a log in a root-only directory; workers are replaced without a lost
    request."""
    if os.geteuid() != 0:
        H.log("# not root: --user cannot be tested")
        return
    logs = os.path.join(TMP, "root-only-logs")
    os.mkdir(logs)
    os.chmod(logs, 0o700)
    log = os.path.join(logs, "access.log")
    srv = H.Server(DOC, workers=2, args=["--user", "nobody", "--access-log", log, "--grace", "3"],
                   ready_path="/index.html").start()
    try:
        check_identities(srv, 2, "before SIGHUP")
        for _ in range(3):
            get(srv.port, "/index.html?before")
        time.sleep(1.2)  # lines are flushed once a second
        os.rename(log, log + ".1")
        R.check("SIGHUP under --user: the reload is logged",
                hup_and_wait(srv, 2, 0), srv.stderr_text()[-600:])
        for _ in range(3):
            get(srv.port, "/index.html?after")

        def text(path):
            try:
                with open(path) as f:
                    return f.read()
            except OSError:
                return ""

        H.wait_until(lambda: "?after" in text(log), 3)
        new, old = text(log), text(log + ".1")
        R.check("... a new access.log in the 0700 root directory has the later requests",
                "?after" in new and "?before" not in new, (new[:300], srv.stderr_text()[-400:]))
        R.check("... the rotated file keeps the earlier ones", "?before" in old and "?after" not in old,
                old[:300])
        R.check("... no 'Permission denied' logged", "ermission denied" not in srv.stderr_text(),
                srv.stderr_text()[-600:])
        check_identities(srv, 2, "after SIGHUP")

        # Clients looping through three reloads: every request answered.
        stop = threading.Event()
        counts = {"ok": 0, "failed": []}

        def client():
            while not stop.is_set():
                try:
                    st, _, body = get(srv.port, "/index.html?loop")
                    if st == 200 and body == b"<p>index</p>\n":
                        counts["ok"] += 1
                    else:
                        counts["failed"].append(st)
                except OSError as e:
                    counts["failed"].append(repr(e))

        threads = [threading.Thread(target=client) for _ in range(3)]
        for t in threads:
            t.start()
        reloads = srv.stderr_text().count("SIGHUP: ")
        for i in range(3):
            time.sleep(0.4)
            hup_and_wait(srv, 2, reloads + i)
        time.sleep(0.4)
        stop.set()
        for t in threads:
            t.join(10)
        R.check("3 clients looping through 3 reloads: %d requests, none lost (%d failed)"
                % (counts["ok"], len(counts["failed"])),
                counts["ok"] > 50 and not counts["failed"], counts["failed"][:5])

        # The supervisor keeps no descriptor of a reload.
        pid = srv.proc.pid
        base = sorted(os.listdir("/proc/%d/fd" % pid))
        reloads = srv.stderr_text().count("SIGHUP: ")
        for i in range(10):
            hup_and_wait(srv, 2, reloads + i)
        fds = sorted(os.listdir("/proc/%d/fd" % pid))
        R.check("10 reloads: the supervisor holds the same %d descriptors (%d after)" % (len(base), len(fds)),
                fds == base, (base, fds))
        st, _, _ = get(srv.port, "/index.html")
        R.check("... and still serves (%s)" % st, st == 200, srv.stderr_text()[-600:])
        check_identities(srv, 2, "after 14 reloads")
    finally:
        srv.stop_and_check(R, "exits 0 on SIGTERM after the reloads")


def header_budget():
    """Issue 20: --header fields must leave room for the response head in
    the write buffer (16 KiB): at most half of it for Server, the added
    fields and HSTS."""
    def serve(args):
        """Exit code and stderr of a server that should refuse to start
        (None: still running after 5 s, then killed)."""
        p = subprocess.Popen([H.BIN, "serve", "-d", DOC, "-p", str(H.free_port()), "--host", H.HOST,
                              "--workers", "1"] + args + H.transport_args(),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            _, err = p.communicate(timeout=5)
            return p.returncode, err.decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
            return None, err.decode("utf-8", "replace")

    rc, err = serve(["--header", "X-Big: " + "b" * (16 * 1024 + 512)])
    R.check("--header of 16.5 KB: exit 2 at once (%s) with one line naming the bound" % rc,
            rc == 2 and "half of the 16384-byte write buffer" in err and "(at most 8192)" in err
            and len(err.splitlines()) == 2, err[-400:])
    # The bound: "Server: httpz\r\n" (15) + "X-Content-Type-Options:
    # nosniff\r\n" (33) + "X-Big: " + value + "\r\n" (9 + n) <= 8192.
    fits = 8192 - 15 - 33 - 9
    for n, serves in ((fits, True), (fits + 1, False)):
        args = ["--header", "X-Big: " + "v" * n]
        if serves:
            srv = H.Server(DOC, workers=1, args=args, ready_path="/index.html").start()
            try:
                st, h, body = get(srv.port, "/index.html")
                st404, h404, _ = get(srv.port, "/nothing")
                d, d404 = dict((k.lower(), v) for k, v in h), dict((k.lower(), v) for k, v in h404)
                R.check("a header just under the bound (%d bytes): served on 200 and 404 (%s, %s)"
                        % (n, st, st404), st == 200 and body == b"<p>index</p>\n" and st404 == 404
                        and d.get("x-big") == "v" * n and d404.get("x-big") == "v" * n, (st, st404))
            finally:
                srv.stop_and_check(R, "... and exits 0")
        else:
            rc, err = serve(args)
            R.check("one byte more (%d): exit 2 (%s)" % (n, rc), rc == 2, err[-300:])




def slow_download(s, data_len, t0, stop_at=None, rate=16 << 20):
    """Reads [s] at [rate] bytes/s (16 MiB/s: the 48 MiB file takes 3 s)
    until the server closes it, or [stop_at] bytes came; returns the byte
    count, [data_len] included, and the seconds since [t0]."""
    while True:
        try:
            chunk = s.recv(262144)
        except OSError:
            break
        if not chunk:
            break
        data_len += len(chunk)
        if stop_at is not None and data_len >= stop_at:
            break
        ahead = data_len / rate - (time.monotonic() - t0)
        if ahead > 0:
            time.sleep(ahead)
    return data_len, time.monotonic() - t0


def grace():
    size = os.path.getsize(os.path.join(DOC, "big.bin"))
    for g, want_whole in [(1, False), (6, True)]:
        srv = H.Server(DOC, workers=1, args=["--grace", str(g)]).start()
        s = H.connect(srv.port, timeout=10)
        s.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
        data_len = len(s.recv(65536))
        t0 = time.monotonic()
        srv.proc.send_signal(signal.SIGTERM)
        # 3 s at 16 MiB/s: more than --grace 1, less than 6.
        data_len, dt = slow_download(s, data_len, t0)
        s.close()
        rc = srv.proc.wait(timeout=15)
        whole = data_len >= size
        if want_whole:
            R.check("--grace %d: the download in progress completes (%.1f s, %d of %d bytes), exit %d"
                    % (g, dt, data_len, size, rc), whole and rc == 0, (data_len, size))
        else:
            R.check("--grace %d: the download is cut after about 1 s (%.1f s, %d of %d bytes), exit %d"
                    % (g, dt, data_len, size, rc), (not whole) and 0.8 < dt < 3 and rc == 0, (data_len, dt))


def reload_keeps_downloads():
    """A reload (logrotate's SIGHUP) lets a download in progress finish,
    even past --grace; a SIGTERM afterwards still stops within --grace."""
    size = os.path.getsize(os.path.join(DOC, "big.bin"))
    srv = H.Server(DOC, workers=2, args=["--grace", "1", "--access-log", os.path.join(TMP, "reload.log")]).start()
    s = H.connect(srv.port, timeout=10)
    s.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
    data_len = len(s.recv(65536))
    t0 = time.monotonic()
    before = srv.stderr_text().count("SIGHUP: ")
    os.kill(srv.proc.pid, signal.SIGHUP)
    # 3 s at 16 MiB/s: three times --grace.
    data_len, dt = slow_download(s, data_len, t0, stop_at=size)
    s.close()
    R.check("reload: the supervisor reloaded", H.wait_until(lambda: srv.stderr_text().count("SIGHUP: ") > before, 5))
    R.check("reload: a download in progress completes past --grace 1 (%.1f s, %d of %d bytes)" % (dt, data_len, size),
            data_len >= size and dt > 1.5, (data_len, dt))
    R.check("reload: serving afterwards", get(srv.port, "/index.html")[0] == 200)
    srv.stop_and_check(R, "reload: exits 0 on SIGTERM")


def localhost():
    srv = H.Program([H.BIN, "serve", "-d", DOC, "--host", "localhost", "--workers", "1"],
                    ready_path="/index.html").start()
    try:
        st, _, _ = get(srv.port, "/index.html")
        R.check("--host localhost serves on 127.0.0.1 (%s)" % st, st == 200, srv.stderr_text()[-300:])
    finally:
        srv.stop()


def signal_names():
    srv = H.Server(DOC, workers=2).start()
    try:
        victim = srv.children()[0]
        os.kill(victim, signal.SIGKILL)
        ok = H.wait_until(lambda: "SIGKILL" in srv.stderr_text(), 5)
        R.check("a worker killed by SIGKILL: the log names it", ok, srv.stderr_text()[-400:])
        R.check("... with the system's number, not OCaml's", "SIGKILL (9)" in srv.stderr_text()
                and "signal -7" not in srv.stderr_text(), srv.stderr_text()[-400:])
    finally:
        srv.stop()


main = H.Server(DOC, workers=1, args=["--max-age", "60"])
H.part(R, "start", main.start)
if main.alive():
    H.part(R, "dotfiles through symlinks", lambda: dotfiles(main))
    H.part(R, "headers and statuses", lambda: headers_and_statuses(main))
    main.stop_and_check(R)
H.part(R, "listing leaves the links out", listing_leaves_links_out, stop_servers=True)
H.part(R, "exclusive port", exclusive_port, stop_servers=True)
H.part(R, "--user", user_nobody, stop_servers=True)
H.part(R, "SIGHUP", sighup_reopens_log, stop_servers=True)
H.part(R, "--grace", grace, stop_servers=True)
H.part(R, "--host localhost", localhost, stop_servers=True)
H.part(R, "signal names", signal_names, stop_servers=True)
H.part(R, "SIGHUP under --user (issue 20)", reload_under_user, stop_servers=True)
H.part(R, "--header budget (issue 20)", header_budget, stop_servers=True)
H.part(R, "a reload keeps downloads", reload_keeps_downloads, stop_servers=True)
R.finish()
