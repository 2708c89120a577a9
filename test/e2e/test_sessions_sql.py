"""Sessions shared beyond one worker, and the application's lifecycle
hooks, end to end: test/server/sessions/sessions_server.exe (Session.with_session /
Session.save over httpz.session_sqlite or httpz.session_postgresql, and
Server.run's on_start / on_worker_start / on_worker_stop / on_stop) on
127.0.0.1.

1. SQLite, 2 workers: a login is seen by both workers (many fresh
   connections at once, so both accept some; each answer names its pid),
   and after a restart of the server on the same file.
2. Session.regenerate at login: a new id (the pre-login cookie is dead)
   and a new CSRF token (the pre-login token gets 403).
3. Logout deletes the row; expiry (--max-age 3); a cookie that is no id
   the server made is not looked up (200, no session); with the file
   locked by another process a login waits off the loop while the worker
   answers other requests.
4. PostgreSQL: a server the test starts (initdb + pg_ctl as nobody, its
   socket in a private directory under /tmp, stopped at the end); two
   server processes on two ports share the sessions (login on one, seen
   and logged out on the other), expiry.
5. Lifecycle: start / worker_start per worker / worker_stop per worker /
   stop, in that order, in the right processes; a request in flight at
   SIGTERM ends before its worker's stop hook; a hook that raises is
   logged (a stop hook: exit 0; a start hook: the start fails); a stop
   hook that hangs is cut after the grace period; SIGHUP's new generation
   runs the worker hooks, not on_start/on_stop.

Run: HTTPZ_IO=epoll HTTPZ_TRANSPORT=plain python3 test/e2e/test_sessions_sql.py
(needs `dune build`: test/server/sessions/sessions_server.exe; the postgresql
package, scripts/deps.sh test). Ends with "N passed, N failed".
"""

import glob
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("sessions_sql")
EXE = os.path.join(H.ROOT, "_build", "default", "test", "server", "sessions", "sessions_server.exe")
COOKIE = "httpz_session"
PG = {}  # the PostgreSQL server: dir, bin, data


def stop_pg():
    if "data" in PG:
        subprocess.run(["runuser", "-u", "nobody", "--", os.path.join(PG["bin"], "pg_ctl"), "-D", PG["data"],
                        "-m", "immediate", "-t", "10", "-w", "stop"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=20)
        del PG["data"]
    if "dir" in PG:
        shutil.rmtree(PG.pop("dir"), ignore_errors=True)


def finish():
    try:
        stop_pg()
    finally:
        R.finish()


def on_alarm(_sig, _frame):
    R.check("suite finished within 240s", False, "suite deadline exceeded")
    finish()


signal.signal(signal.SIGALRM, on_alarm)
signal.alarm(240)


def server(*args):
    return H.Program([EXE] + list(args), ready_path="/whoami")


def cookie_of(headers):
    """The value of the session's Set-Cookie, None when there is none."""
    for k, v in headers:
        if k == "set-cookie" and v.startswith(COOKIE + "="):
            return v.split(";")[0].split("=", 1)[1]
    return None


def req(srv, method, path, cookie=None, headers=None):
    h = dict(headers or {})
    if cookie:
        h["Cookie"] = "%s=%s" % (COOKIE, cookie)
    return H.request(srv.port, method, path, headers=h)


def whoami(srv, cookie):
    st, _h, body = req(srv, "GET", "/whoami", cookie)
    m = re.match(rb"pid=(\d+) user=(\S+)", body)
    return (st, int(m.group(1)), m.group(2).decode()) if m else (st, None, body)


def login(srv, user, cookie=None):
    st, h, body = req(srv, "POST", "/login?user=" + user, cookie)
    return st, cookie_of(h), body


def fan_out(srv, cookie, n=160, threads=8):
    """n GET /whoami on fresh connections, [threads] at once: (pid, user) seen."""
    seen = []
    lock = threading.Lock()

    def run():
        for _ in range(n // threads):
            try:
                r = whoami(srv, cookie)
            except OSError as e:
                r = (None, None, str(e))
            with lock:
                seen.append(r)

    ts = [threading.Thread(target=run) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    return seen


def fan_out_all(srv, cookie, want, rounds=5):
    """fan_out until every pid of [want] answered (the kernel's choice of
    worker may favour one on a busy machine), at most [rounds] times."""
    seen = []
    for _ in range(rounds):
        seen += fan_out(srv, cookie)
        if want <= set(p for _s, p, _u in seen):
            break
    return seen


def events(path):
    try:
        with open(path) as f:
            return [(a, int(b)) for a, b in (line.split() for line in f if line.strip())]
    except OSError:
        return []


def check_lifecycle(name, ev, supervisor_pid, workers):
    """The hooks' order in a stopped server's event file."""
    kinds = [k for k, _ in ev]
    R.check("%s: on_start first, once, in the supervisor" % name,
            kinds[:1] == ["start"] and ev[0][1] == supervisor_pid and kinds.count("start") == 1, ev)
    R.check("%s: on_stop last, once, in the supervisor" % name,
            kinds[-1:] == ["stop"] and ev[-1][1] == supervisor_pid and kinds.count("stop") == 1, ev)
    starts = [p for k, p in ev if k == "worker_start"]
    stops = [p for k, p in ev if k == "worker_stop"]
    R.check("%s: on_worker_start in each of the %d workers (not the supervisor)" % (name, workers),
            len(set(starts)) == workers and len(starts) == workers and supervisor_pid not in starts, ev)
    R.check("%s: on_worker_stop in the same workers, after their start" % name,
            sorted(stops) == sorted(starts)
            and all(ev.index(("worker_start", p)) < ev.index(("worker_stop", p)) for p in stops), ev)


# {1 SQLite}

def sqlite_part():
    d = R.cleanup(tempfile.mkdtemp(prefix="httpz-sessions-"))
    db = os.path.join(d, "sessions.db")
    ev = os.path.join(d, "events")
    a = server("--workers", "2", "--sqlite", db, "--events", ev).start()
    st, cookie, body = login(a, "alice")
    R.check("sqlite: login answers 200 with a session cookie", st == 200 and cookie and len(cookie) == 43,
            (st, cookie, body))
    workers = set(p for k, p in events(ev) if k == "worker_start")
    seen = fan_out_all(a, cookie, workers)
    pids = set(p for _st, p, _u in seen)
    R.check("sqlite: %d requests on fresh connections all answered 200 user=alice" % len(seen),
            len(seen) >= 160 and all(s == 200 and u == "alice" for s, _p, u in seen),
            [x for x in seen if x[0] != 200 or x[2] != "alice"][:5])
    R.check("sqlite: both workers answered (%d workers started, pids seen %s)" % (len(workers), sorted(pids)),
            len(workers) == 2 and pids == workers, (workers, pids))
    # No cookie, and a cookie that is no id the server made: no session,
    # nothing looked up, no error.
    R.check("sqlite: no cookie: no user", whoami(a, None)[2] == "-")
    for junk in ("x", "../../etc/passwd", "A" * 42 + "!", "A" * 43, "A" * 500):
        st, _p, u = whoami(a, junk)
        R.check("sqlite: cookie %r: 200, no user" % junk[:20], st == 200 and u == "-", (st, u))
    # An update without a new id: the next request sees it.
    st, h, body = req(a, "POST", "/set?k=color&v=blue", cookie)
    R.check("sqlite: an update keeps the id (no Set-Cookie)", st == 200 and cookie_of(h) is None, (st, h))
    st, h, body = req(a, "POST", "/set?k=size&v=9", cookie)
    R.check("sqlite: the next request sees the update", body == b"color=blue&size=9&user=alice", body)

    # Regenerate at login: new id, new CSRF token.
    st, h, tok1 = req(a, "GET", "/csrf")
    pre = cookie_of(h)
    tok1 = tok1.decode()
    R.check("csrf: a token and a session before login", st == 200 and pre and len(tok1) == 32, (st, pre, tok1))
    st, _h, body = req(a, "POST", "/csrf", pre, {"X-CSRF-Token": tok1})
    R.check("csrf: the token passes before login (200)", st == 200 and body == b"checked", (st, body))
    st, post, _b = login(a, "carol", pre)
    R.check("regenerate: login gives a new session id", st == 200 and post and post != pre, (pre, post))
    R.check("regenerate: the pre-login id is dead (no user, no token)", whoami(a, pre)[2] == "-")
    st, _h, tok2 = req(a, "GET", "/csrf", post)
    tok2 = tok2.decode()
    R.check("regenerate: a new CSRF token after login", st == 200 and len(tok2) == 32 and tok2 != tok1,
            (tok1, tok2))
    st, _h, body = req(a, "POST", "/csrf", post, {"X-CSRF-Token": tok1})
    R.check("regenerate: the pre-login CSRF token is refused after login (403)", st == 403, (st, body))
    st, _h, body = req(a, "POST", "/csrf", post, {"X-CSRF-Token": tok2})
    R.check("regenerate: the new token passes (200)", st == 200, (st, body))
    # Route.compile ~csrf with a store read off the loop: the form route's
    # check waits for the session, then the handler runs with its parameter.
    form = {"X-CSRF-Token": tok2, "Content-Type": "application/x-www-form-urlencoded"}
    st, _h, body = req(a, "POST", "/form/bob", post, form)
    R.check("form route, SQL store: the token passes, the parameter read after the wait (200)",
            st == 200 and body == b"form bob", (st, body))
    st, _h, body = req(a, "POST", "/form/bob", post, dict(form, **{"X-CSRF-Token": tok1}))
    R.check("form route, SQL store: a stale token is refused (403)", st == 403, (st, body))
    st, _h, body = req(a, "POST", "/form/bob", None, form)
    R.check("form route, SQL store: no session, refused (403)", st == 403, (st, body))

    a.stop_and_check(R, "sqlite: the server exits 0 on SIGTERM")
    check_lifecycle("sqlite", events(ev), a.proc.pid, 2)

    # A restart on the same file: the session is still there.
    os.unlink(ev)
    b = server("--workers", "2", "--sqlite", db, "--events", ev).start()
    seen = fan_out(b, cookie, n=40)
    R.check("sqlite: after a restart, the session survives (40 requests, user=alice)",
            len(seen) == 40 and all(s == 200 and u == "alice" for s, _p, u in seen), seen[:3])
    R.check("sqlite: after the restart, new worker pids", not (set(p for _s, p, _u in seen) & pids), seen[:3])
    # Logout: cookie deleted, row gone, the old cookie dead.
    st, h, _b = req(b, "POST", "/logout", cookie)
    set_cookie = [v for k, v in h if k == "set-cookie"]
    R.check("logout: the cookie is deleted (Max-Age=0)", st == 200 and any("Max-Age=0" in v for v in set_cookie),
            (st, set_cookie))
    rows = sqlite3.connect(db).execute("SELECT count(*) FROM httpz_sessions WHERE id = ?", (cookie,)).fetchone()[0]
    R.check("logout: the row is deleted", rows == 0, rows)
    R.check("logout: the old cookie finds no session", whoami(b, cookie)[2] == "-")
    b.stop_and_check(R, "sqlite: the restarted server exits 0")

    # The loop never waits for the database: with the file's write lock
    # held by another process, a login waits (busy_timeout, on an offload
    # thread) while the one worker answers other requests at once; the
    # login completes when the lock goes.
    one = server("--workers", "1", "--sqlite", db).start()
    locker = sqlite3.connect(db, isolation_level=None, timeout=5)
    locker.execute("BEGIN EXCLUSIVE")
    out = {}

    def slow_login():
        t0 = time.monotonic()
        out["r"] = login(one, "hana")
        out["t"] = time.monotonic() - t0

    t = threading.Thread(target=slow_login)
    t.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    answers = [whoami(one, None) for _ in range(10)]
    took = time.monotonic() - t0
    R.check("locked database: 10 other requests answered in %.2f s (< 1 s) while a login waits" % took,
            took < 1.0 and all(a[0] == 200 for a in answers) and "r" not in out, (took, answers[:2], out))
    time.sleep(1.0)
    locker.execute("COMMIT")
    locker.close()
    t.join(10)
    r = out.get("r", (None, None, b""))
    R.check("locked database: the login completes once the lock goes (%.2f s)" % out.get("t", -1),
            r[0] == 200 and r[1] and out["t"] >= 1.0 and whoami(one, r[1])[2] == "hana", out)
    one.stop_and_check(R, "locked database: the server exits 0")

    # Expiry.
    c = server("--workers", "2", "--sqlite", db, "--max-age", "3").start()
    _st, short, _b = login(c, "dave")
    R.check("expiry: seen before it expires", whoami(c, short)[2] == "dave")
    time.sleep(4.1)
    R.check("expiry: gone after --max-age 3", whoami(c, short)[2] == "-")
    c.stop_and_check(R, "expiry: the server exits 0")


# {1 PostgreSQL}

def start_pg():
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not R.check("postgresql: initdb found under /usr/lib/postgresql/*/bin (scripts/deps.sh test)", bins, bins):
        return None
    PG["bin"] = os.path.dirname(bins[-1])
    PG["dir"] = d = tempfile.mkdtemp(prefix="httpz-pg-")
    os.chmod(d, 0o700)
    # PostgreSQL refuses to run as root: it runs as nobody, in a directory
    # of its own (the socket too: nothing listens on TCP).
    os.chown(d, 65534, 65534)
    data = os.path.join(d, "data")
    as_nobody = ["runuser", "-u", "nobody", "--"]
    r = subprocess.run(as_nobody + [os.path.join(PG["bin"], "initdb"), "-D", data, "-A", "trust", "-U", "postgres",
                                    "--no-sync", "-E", "UTF8"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    if not R.check("postgresql: initdb", r.returncode == 0, r.stdout[-1500:]):
        return None
    port = H.free_port()
    PG["data"] = data
    r = subprocess.run(as_nobody + [os.path.join(PG["bin"], "pg_ctl"), "-D", data, "-l", os.path.join(d, "log"),
                                    "-w", "-t", "60", "-o", "-c listen_addresses='' -k %s -p %d -c fsync=off" % (d, port),
                                    "start"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=90)
    if not R.check("postgresql: pg_ctl start (socket in %s, port %d)" % (d, port), r.returncode == 0,
                   r.stdout[-1500:] + open(os.path.join(d, "log"), "rb").read()[-1500:]):
        return None
    return "host=%s port=%d user=postgres dbname=postgres" % (d, port)


def pg_part():
    conninfo = start_pg()
    if conninfo is None:
        return
    d = R.cleanup(tempfile.mkdtemp(prefix="httpz-sessions-pg-"))
    ev = os.path.join(d, "events")
    a = server("--workers", "2", "--pg", conninfo, "--events", ev).start()
    b = server("--workers", "1", "--pg", conninfo).start()
    R.check("postgresql: two server processes on two ports", a.port != b.port and a.proc.pid != b.proc.pid)
    st, cookie, body = login(a, "erin")
    R.check("postgresql: login on the first", st == 200 and cookie, (st, body))
    seen_b = fan_out(b, cookie, n=40, threads=4)
    R.check("postgresql: the second server sees the session (40 requests)",
            len(seen_b) == 40 and all(s == 200 and u == "erin" for s, _p, u in seen_b), seen_b[:3])
    seen_a = fan_out_all(a, cookie, set(p for k, p in events(ev) if k == "worker_start"))
    R.check("postgresql: both workers of the first see it",
            all(u == "erin" for _s, _p, u in seen_a) and len(set(p for _s, p, _u in seen_a)) == 2, seen_a[:3])
    st, h, _b = req(b, "POST", "/set?k=cart&v=3", cookie)
    st, h, body = req(a, "POST", "/set?k=step&v=2", cookie)
    R.check("postgresql: an update on one is seen by the other", body == b"cart=3&step=2&user=erin", body)
    st, _h, _b = req(b, "POST", "/logout", cookie)
    R.check("postgresql: logout on the second: the first sees no session",
            st == 200 and whoami(a, cookie)[2] == "-")
    b.stop_and_check(R, "postgresql: the second server exits 0")
    a.stop_and_check(R, "postgresql: the first server exits 0")
    check_lifecycle("postgresql", events(ev), a.proc.pid, 2)
    c = server("--workers", "1", "--pg", conninfo, "--max-age", "3").start()
    _st, short, _b = login(c, "frank")
    R.check("postgresql expiry: seen before it expires", whoami(c, short)[2] == "frank")
    time.sleep(4.1)
    R.check("postgresql expiry: gone after --max-age 3", whoami(c, short)[2] == "-")
    c.stop_and_check(R, "postgresql expiry: the server exits 0")


# {1 Lifecycle}

def lifecycle_part():
    d = R.cleanup(tempfile.mkdtemp(prefix="httpz-lifecycle-"))
    db = os.path.join(d, "s.db")
    ev = os.path.join(d, "events")
    # A request in flight at SIGTERM ends before its worker's stop hook.
    a = server("--workers", "1", "--sqlite", db, "--events", ev).start()
    out = {}

    def slow():
        out["r"] = H.request(a.port, "GET", "/slow", timeout=10)

    t = threading.Thread(target=slow)
    t.start()
    time.sleep(0.3)
    rc = a.stop(grace=10)
    t.join(10)
    R.check("in flight at SIGTERM: answered 200", out.get("r", (None,))[0] == 200, out)
    R.check("one worker, no supervisor: exits 0", rc == 0, a.stderr_text()[-800:])
    e = events(ev)
    R.check("one worker: start, worker_start, slow_done, worker_stop, stop, all in the one process",
            [k for k, _ in e] == ["start", "worker_start", "slow_done", "worker_stop", "stop"]
            and set(p for _k, p in e) == {a.proc.pid}, e)

    # SIGHUP: a new generation of workers runs on_worker_start, the
    # retired one on_worker_stop once drained; on_start/on_stop do not run
    # again, and the session goes on.
    os.unlink(ev)
    g = server("--workers", "2", "--sqlite", db, "--events", ev, "--access-log", os.path.join(d, "access.log")).start()
    _st, ck, _b = login(g, "gina")
    first = set(p for k, p in events(ev) if k == "worker_start")
    os.kill(g.proc.pid, signal.SIGHUP)
    H.wait_until(lambda: len([1 for k, _p in events(ev) if k == "worker_stop"]) == 2, 10)
    e = events(ev)
    second = set(p for k, p in e if k == "worker_start") - first
    R.check("SIGHUP: the new generation's 2 workers ran on_worker_start", len(second) == 2, e)
    R.check("SIGHUP: the retired workers ran on_worker_stop, the new ones not yet",
            sorted(p for k, p in e if k == "worker_stop") == sorted(first), e)
    seen = fan_out(g, ck, n=40)
    R.check("SIGHUP: the session is seen by the new generation",
            seen and all(u == "gina" for _s, _p, u in seen) and set(p for _s, p, _u in seen) <= second, seen[:3])
    g.stop_and_check(R, "SIGHUP: the server exits 0")
    e = events(ev)
    R.check("SIGHUP: on_start and on_stop once each, every worker stopped once",
            [k for k, _p in e].count("start") == 1 and [k for k, _p in e].count("stop") == 1
            and sorted(p for k, p in e if k == "worker_stop") == sorted(first | second), e)

    # A stop hook that raises: logged, the exit stays 0.
    os.unlink(ev)
    b = server("--workers", "2", "--sqlite", db, "--events", ev, "--raise-in", "worker_stop").start()
    rc = b.stop(grace=10)
    err = b.stderr_text()
    R.check("on_worker_stop raising: logged once per worker", err.count("on_worker_stop raised") == 2, err[-1500:])
    R.check("on_worker_stop raising: the server still exits 0", rc == 0, (rc, err[-800:]))
    R.check("on_worker_stop raising: on_stop still runs", events(ev)[-1:] and events(ev)[-1][0] == "stop", events(ev))

    # A start hook that raises: the start fails, logged.
    for workers in ("1", "2"):
        os.unlink(ev) if os.path.exists(ev) else None
        p = subprocess.run([EXE, "-p", str(H.free_port()), "--workers", workers, "--sqlite", db, "--events", ev,
                            "--raise-in", "worker_start"] + H.transport_args(),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
        R.check("on_worker_start raising (%s workers): start fails (exit 1), logged" % workers,
                p.returncode == 1 and b"on_worker_start raised" in p.stdout, (p.returncode, p.stdout[-800:]))
    p = subprocess.run([EXE, "-p", str(H.free_port()), "--sqlite", db, "--raise-in", "start"] + H.transport_args(),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
    R.check("on_start raising: start fails (exit 1), logged", p.returncode == 1 and b"on_start raised" in p.stdout,
            (p.returncode, p.stdout[-800:]))

    # A stop hook that hangs is cut after the grace period (1 s here).
    for workers in ("1", "2"):
        c = server("--workers", workers, "--sqlite", db, "--grace", "1", "--stop-sleep", "60").start()
        t0 = time.monotonic()
        rc = c.stop(grace=15)
        took = time.monotonic() - t0
        err = c.stderr_text()
        R.check("a hanging on_worker_stop (%s workers): the process ends within 6 s (%.1f s)" % (workers, took),
                rc is not None and took < 6, (rc, took, err[-800:]))
        R.check("a hanging on_worker_stop (%s workers): logged" % workers,
                "on_worker_stop did not return within 1.0 s" in err, err[-800:])


if not os.path.isfile(EXE):
    R.check("sessions_server.exe built", False, EXE + " missing: run dune build")
    finish()
try:
    H.part(R, "sqlite: 2 workers, restart, regenerate, logout, expiry", sqlite_part, stop_servers=True)
    H.part(R, "postgresql: two server processes", pg_part, stop_servers=True)
    H.part(R, "lifecycle hooks", lifecycle_part, stop_servers=True)
finally:
    finish()
