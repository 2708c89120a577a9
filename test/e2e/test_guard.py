"""Access control and the error log (issue 25), against the real server,
per backend and transport.

1. --auth-file under --auth-prefix: 401 with WWW-Authenticate and the
   realm without or with wrong credentials; SHA-512 (openssl passwd -6)
   and bcrypt users let in; paths outside the prefix open; a
   percent-encoded or dot-segment path under the prefix still guarded;
   a keep-alive client with the right password gets every request.
2. --access: the first rule that contains the client decides (403).
3. --limit-rate/--limit-burst: a client over the rate (127.0.0.2) gets
   429 with Retry-After and about burst + rate x seconds answers; one
   under it (127.0.0.3), at the same time, gets no 429.
4. --limit-conn: the connection over the limit is closed at once; one
   closing makes room again; another address is not affected.
5. --error-log: timestamped lines with level and pid; a 403 for an
   unreadable file names the path and EACCES; the log reopened on
   SIGHUP after a rotation.
6. Bad option values exit 2 with one line.
7. Status totals with 2 workers on --stats-listen (JSON and text) and
   behind the token: responses by class, bytes, connections by state.
8. The smaller things: the stats are not answered on the redirect port;
   --redirect-http under socket activation with its socket passed; a
   missing --tls-cert exits 2; --help to a pipe has no overstrike.

Run: python3 test/e2e/test_guard.py   (needs _build/install/default/bin/httpz)
"""

import os
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

R = H.Results("guard")
H.suite_deadline(R, 55)
H.require_binary(R)

TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-guard-"))
os.chmod(TMP, 0o755)
DOC = os.path.join(TMP, "root")


def write(rel, data, mode=0o644):
    H.write_file(DOC, rel, data, mode)


write("index.html", b"public\n")
write("admin/index.html", b"admin\n")
write("administrator.html", b"not admin\n")
write("secret.txt", b"nobody may read this\n", mode=0o000)
for d, _subdirs, _files in os.walk(DOC):
    os.chmod(d, 0o755)


def openssl_hash(flag, password):
    return subprocess.run(["openssl", "passwd", flag, password], stdout=subprocess.PIPE,
                          check=True).stdout.decode().strip()


def bcrypt_hash(password):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import crypt  # libxcrypt through Python: deprecated but present in 3.11
    return crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16))


USERS = os.path.join(TMP, "users")
with open(USERS, "w") as f:
    f.write("# test users\n")
    f.write("alice:%s\n" % openssl_hash("-6", "wonderland"))
    f.write("bob:%s\n" % openssl_hash("-5", "builder"))
    f.write("carol:%s\n" % bcrypt_hash("s3cret"))
os.chmod(USERS, 0o644)


def basic(user, password):
    import base64
    return "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()


def connect_from(src, port, timeout=5.0):
    return H.connect(port, timeout=timeout, src=src)


get = H.send_get


def auth_part():
    srv = H.Server(DOC, args=["--auth-file", USERS, "--auth-realm", "Staff only", "--auth-prefix", "/admin"]).start()
    st, hd, body = H.request(srv.port, "GET", "/admin/")
    R.check("no credentials: 401", st == 401, st)
    R.check("WWW-Authenticate names the realm",
            dict(hd).get("WWW-Authenticate", dict((k.lower(), v) for k, v in hd).get("www-authenticate"))
            == 'Basic realm="Staff only", charset="UTF-8"', hd)
    st, _, _ = H.request(srv.port, "GET", "/admin/", headers={"Authorization": basic("alice", "wrong")})
    R.check("wrong password: 401", st == 401, st)
    st, _, _ = H.request(srv.port, "GET", "/admin/", headers={"Authorization": basic("mallory", "wonderland")})
    R.check("unknown user: 401", st == 401, st)
    for user, pw, kind in [("alice", "wonderland", "SHA-512"), ("bob", "builder", "SHA-256"), ("carol", "s3cret", "bcrypt")]:
        st, _, body = H.request(srv.port, "GET", "/admin/", headers={"Authorization": basic(user, pw)})
        R.check("%s user let in" % kind, st == 200 and body == b"admin\n", (st, body))
    for path in ["/", "/administrator.html"]:
        st, _, _ = H.request(srv.port, "GET", path)
        R.check("outside the prefix: %s open" % path, st == 200, st)
    for path in ["/%61dmin/", "//admin/index.html", "/x/../admin/", "/admin"]:
        st, _, _ = H.request(srv.port, "GET", path)
        R.check("under the prefix however written: %s is 401" % path, st == 401, st)
    # A keep-alive client pays the hash once: 50 requests in well under
    # 50 bcrypt verifications' time would not prove it, so compare with
    # one fresh verification of a wrong password.
    s = H.connect(srv.port)
    rd = H.Reader(s)
    t0 = time.monotonic()
    ok = 0
    for _ in range(50):
        get(s, "/admin/", {"Authorization": basic("carol", "s3cret")})
        r = rd.read_response()
        ok += r is not None and r.status == 200
    s.close()
    R.check("keep-alive: 50 of 50 let in", ok == 50, ok)
    R.check("keep-alive: 50 requests in under 2 s", time.monotonic() - t0 < 2.0, time.monotonic() - t0)
    srv.stop_and_check(R, "auth: server exits 0")


def access_part():
    cases = [
        (["--access", "deny:127.0.0.1"], 403, "deny:127.0.0.1"),
        (["--access", "allow:127.0.0.0/8", "--access", "deny:all"], 200, "allow:127.0.0.0/8 then deny:all"),
        (["--access", "allow:10.0.0.0/8", "--access", "deny:all"], 403, "allow:10.0.0.0/8 then deny:all"),
        (["--access", "deny:127.0.0.2", "--access", "allow:all"], 200, "deny:127.0.0.2 (another address)"),
        (["--access", "allow:::1", "--access", "deny:0.0.0.0/0"], 403, "deny 0.0.0.0/0"),
    ]
    srvs = [(H.Server(DOC, args=args, ready_path="/").start(), want, name) for args, want, name in cases]
    for srv, want, name in srvs:
        st, _, body = H.request(srv.port, "GET", "/")
        R.check("%s: %d" % (name, want), st == want, (st, body))
    srv = srvs[0][0]
    st, _, body = H.request(srv.port, "GET", "/admin/")
    R.check("a denied client gets 403 everywhere", st == 403, st)
    for srv, _, _ in srvs:
        srv.stop()


def rate_part():
    rate, burst, seconds = 20, 5, 2.0
    srv = H.Server(DOC, args=["--limit-rate", str(rate), "--limit-burst", str(burst)]).start()
    # The readiness probe came from 127.0.0.1: the clients below use other
    # addresses, each with a bucket of its own.
    fast = {"ok": 0, "limited": 0, "retry": set()}
    slow = {"ok": 0, "limited": 0}

    def client(src, counts, pause):
        """Keep-alive requests from [src] for [seconds], [pause] apart."""
        s = connect_from(src, srv.port)
        rd = H.Reader(s)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            get(s, "/")
            r = rd.read_response()
            if r.status == 200:
                counts["ok"] += 1
            else:
                counts["limited"] += 1
                counts.setdefault("retry", set()).add(r.header("Retry-After"))
            time.sleep(pause)
        s.close()

    def run_fast():
        client("127.0.0.2", fast, 0)

    def run_slow():
        client("127.0.0.3", slow, 1.0 / (rate / 2))

    t0 = time.monotonic()
    threads = [threading.Thread(target=run_fast), threading.Thread(target=run_slow)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t0
    want = burst + rate * elapsed
    R.check("over the rate: about burst + rate x time let in (%.0f)" % want,
            want * 0.8 <= fast["ok"] <= want * 1.1 + 2, fast)
    R.check("over the rate: the rest got 429", fast["limited"] > fast["ok"], fast)
    R.check("429 carries Retry-After: 1", fast["retry"] == {"1"}, fast["retry"])
    R.check("under the rate, at the same time: no 429", slow["limited"] == 0 and slow["ok"] >= 10, slow)
    srv.stop_and_check(R, "rate: server exits 0")


def conn_part():
    srv = H.Server(DOC, args=["--limit-conn", "2"]).start()
    held = []
    for i in range(2):
        s = connect_from("127.0.0.4", srv.port)
        get(s, "/")
        r = H.Reader(s).read_response()
        R.check("connection %d of 2 served" % (i + 1), r is not None and r.status == 200, r)
        held.append(s)
    refused = False
    try:
        s = connect_from("127.0.0.4", srv.port, timeout=3)
        get(s, "/")
        refused = H.Reader(s).read_response(timeout=3) is None
        s.close()
    except (OSError, H.ProtocolError):
        refused = True  # reset, or the TLS handshake cut
    R.check("the third connection is closed at once", refused)
    s = connect_from("127.0.0.5", srv.port)
    get(s, "/")
    r = H.Reader(s).read_response()
    R.check("another address is not affected", r is not None and r.status == 200, r)
    s.close()
    held.pop().close()

    def again():
        try:
            s = connect_from("127.0.0.4", srv.port, timeout=2)
            get(s, "/")
            r = H.Reader(s).read_response(timeout=2)
            s.close()
            return r is not None and r.status == 200
        except (OSError, H.ProtocolError):
            return False

    R.check("one closed: room again", H.wait_until(again, 3))
    for s in held:
        s.close()
    srv.stop_and_check(R, "conn: server exits 0")


LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \[(error|warn|info|debug)\] httpz\[(\d+)\]: (.*)$")


def error_log_part():
    log = os.path.join(TMP, "logs", "error.log")
    os.makedirs(os.path.dirname(log), mode=0o755)
    srv = H.Server(DOC, workers=2, args=["--error-log", log, "--user", "nobody"]).start()
    st, _, _ = H.request(srv.port, "GET", "/secret.txt")
    R.check("an unreadable file: 403", st == 403, st)

    def lines():
        with open(log) as f:
            return f.read().splitlines()

    def logged(pred):
        return H.wait_until(lambda: [l for l in lines() if pred(l)], 3)

    got = logged(lambda l: "secret.txt" in l)
    R.check("its open() failure is logged with the path and errno",
            got and "open() \"%s/secret.txt\" failed (EACCES" % DOC in got[0] and "[warn]" in got[0], got)
    R.check("every line has a timestamp, level and pid", lines() and all(LINE.match(l) for l in lines()), lines())
    R.check("nothing on stderr", srv.stderr_text() == "", srv.stderr_text())
    os.rename(log, log + ".1")
    os.kill(srv.proc.pid, signal.SIGHUP)
    reopened = H.wait_until(lambda: os.path.exists(log) and logged(lambda l: "SIGHUP" in l), 5)
    R.check("SIGHUP: a new error log at the path, with the reload logged at info",
            reopened and "[info]" in reopened[0], reopened)
    srv.stop_and_check(R, "error log: server exits 0")


def bad_values_part():
    for args, want in [
        (["--access", "permit:1.2.3.4"], "--access"),
        (["--access", "deny:10.0.0.0/33"], "--access deny 10.0.0.0/33"),
        (["--limit-burst", "3"], "--limit-burst needs --limit-rate"),
        (["--limit-rate", "0"], "--limit-rate must be a positive number"),
        (["--limit-conn=-1"], "--limit-conn must not be negative"),
        (["--auth-file", "/nonexistent/users"], "--auth-file /nonexistent/users"),
        (["--auth-prefix", "/admin"], "--auth-prefix needs --auth-file"),
        (["--log-level", "loud"], "--log-level"),
    ]:
        p = subprocess.run([H.BIN, "serve", "-d", DOC, "-p", "0"] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=10)
        err = p.stderr.decode()
        R.check("%s: exit 2 naming it" % " ".join(args), p.returncode == 2 and want in err.splitlines()[0],
                (p.returncode, err))


def plain_get(port, path, headers=None, timeout=5.0):
    """A request in plain HTTP whatever the suite's transport (the status
    listener and the redirect port never speak TLS)."""
    s = socket.create_connection((H.HOST, port), timeout=timeout)
    try:
        h = {"Host": "127.0.0.1:%d" % port, "Connection": "close"}
        h.update(headers or {})
        s.sendall(("GET %s HTTP/1.1\r\n" % path + "".join("%s: %s\r\n" % kv for kv in h.items()) + "\r\n").encode())
        r = H.Reader(s).read_response(timeout=timeout)
        return (r.status, r.headers, r.body) if r else (None, [], b"")
    finally:
        s.close()


def status_part():
    import json
    sport = H.free_port()
    srv = H.Server(DOC, workers=2, args=["--stats-listen", "127.0.0.1:%d" % sport] + H.STATS_ARGS).start()
    # The readiness probe was one 200. Fresh connections spread over both
    # workers.
    sizes = 0
    for _ in range(40):
        st, _, body = H.request(srv.port, "GET", "/")
        sizes += len(body)
    for _ in range(10):
        H.request(srv.port, "GET", "/missing")
    # Three keep-alive clients idle, one in the middle of a head.
    idle = []
    for _ in range(3):
        c = H.connect(srv.port)
        get(c, "/")
        H.Reader(c).read_response()
        idle.append(c)
    reading = H.connect(srv.port)
    reading.sendall(b"GET / HTTP/1.1\r\nHost: a\r\n")
    time.sleep(1.3)  # the gauges are written once a second
    st, hd, body = plain_get(sport, "/__httpz/stats")
    R.check("status listener: 200 JSON without a token", st == 200 and body.startswith(b"{"), (st, body[:200]))
    doc = json.loads(body)
    tot = doc.get("totals", {})
    R.check("totals: both workers", tot.get("workers") == 2, tot)
    R.check("totals: 2xx of every worker (44 = probe + 40 + 3)", tot.get("responses", {}).get("2xx") == 44, tot)
    R.check("totals: 4xx", tot.get("responses", {}).get("4xx") == 10, tot)
    R.check("totals: bytes sent cover the bodies", tot.get("bytes_sent", 0) > sizes, (tot, sizes))
    R.check("totals: connections accepted", tot.get("connections_accepted", 0) >= 55, tot)
    conns = tot.get("connections", {})
    R.check("totals: three idle, one reading", conns.get("idle", 0) >= 3 and conns.get("reading", 0) >= 1, conns)
    for c in idle + [reading]:
        c.close()
    st, _, text = plain_get(sport, "/__httpz/stats.txt")
    lines = dict(l.split(" ", 1) for l in text.decode().splitlines())
    R.check("text form: name value lines", st == 200 and lines.get("responses_4xx") == "10"
            and int(lines.get("responses_2xx", 0)) >= 45, text)
    st, _, _ = plain_get(sport, "/index.html")
    R.check("status listener: 404 for anything else", st == 404, st)
    st, _, body = H.request(srv.port, "GET", "/__httpz/stats", headers={"Authorization": H.STATS_AUTH.split(": ", 1)[1]})
    R.check("with the token on the site: the totals too", st == 200 and b'"totals"' in body, (st, body[:200]))
    st, _, _ = H.request(srv.port, "GET", "/__httpz/stats")
    R.check("without the token: the site's 404", st == 404, st)
    srv.stop_and_check(R, "status: server exits 0")


def redirect_part():
    """The redirect port answers redirects only: not the stats, even with
    the token. (Needs TLS: the plain transport gets its own here.)"""
    rport = H.free_port()
    cert, key = H.tls_files()[1:]
    tls = [] if H.TLS else ["--tls-cert", cert, "--tls-key", key]
    srv = H.Server(DOC, args=tls + ["--redirect-http", str(rport)] + H.STATS_ARGS, ready_path="/").start()
    st, hd, _ = plain_get(rport, "/__httpz/stats", headers={"Authorization": H.STATS_AUTH.split(": ", 1)[1]})
    R.check("stats with the token on the redirect port: 301, not the stats", st == 301, (st, hd))
    srv.stop_and_check(R, "redirect: server exits 0")


LAUNCHER = r'''
import os, socket, sys
socks = []
for _ in range(2):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    socks.append(s)
ports = [s.getsockname()[1] for s in socks]
with open(sys.argv[1], "w") as f:
    f.write(" ".join(map(str, ports)))
copies = [os.dup(s.fileno()) for s in socks]
for i, fd in enumerate(copies):
    os.dup2(fd, 3 + i, inheritable=True)
os.environ["LISTEN_FDS"] = "2"
os.environ["LISTEN_PID"] = str(os.getpid())
argv = [a.replace("{REDIRECT}", str(ports[1])) for a in sys.argv[2:]]
os.execv(argv[0], argv)
'''


def activation_part():
    """--redirect-http under socket activation, its socket passed too."""
    launcher = os.path.join(TMP, "launcher.py")
    with open(launcher, "w") as f:
        f.write(LAUNCHER)
    ports_file = os.path.join(TMP, "ports")
    cert, key = H.tls_files()[1:]
    err = open(os.path.join(TMP, "activation.err"), "wb")
    proc = subprocess.Popen([sys.executable, launcher, ports_file, H.BIN, "serve", "-d", DOC, "--workers", "1",
                             "--tls-cert", cert, "--tls-key", key, "--redirect-http", "{REDIRECT}"]
                            + (["--io", H.IO] if H.IO else []),
                            stdout=err, stderr=err, start_new_session=True)
    err.close()
    try:
        H.wait_until(lambda: os.path.exists(ports_file) and os.path.getsize(ports_file) > 0, 5)
        with open(ports_file) as f:
            https, redirect = (int(x) for x in f.read().split())
        got = H.wait_until(lambda: proc.poll() is None and _try(lambda: plain_get(redirect, "/a?b")), 5)
        st, hd, _ = got or (None, [], b"")
        loc = dict((k.lower(), v) for k, v in hd).get("location")
        R.check("the passed redirect socket answers 301 to https", st == 301
                and loc == "https://127.0.0.1:%d/a?b" % https, (st, hd, proc.poll(),
                                                                 open(os.path.join(TMP, "activation.err")).read()))
        s = H.wrap(socket.create_connection((H.HOST, https), timeout=5))
        get(s, "/")
        r = H.Reader(s).read_response()
        s.close()
        R.check("the passed HTTPS socket serves", r is not None and r.status == 200, r)
    finally:
        proc.send_signal(signal.SIGTERM)
        R.check("activation: exits 0", proc.wait(timeout=10) == 0)


def _try(f):
    try:
        return f()
    except OSError:
        return None


def cli_part():
    p = subprocess.run([H.BIN, "serve", "-d", DOC, "-p", "0", "--tls-cert", "/nonexistent/cert.pem",
                        "--tls-key", "/nonexistent/key.pem"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=10)
    err = p.stderr.decode()
    R.check("a missing --tls-cert: exit 2 naming it", p.returncode == 2
            and err.startswith("httpz serve: --tls-cert /nonexistent/cert.pem: no such file"), (p.returncode, err))
    # README: "a second server on a port already served fails with
    # 'address already in use'": one timestamped error line, exit 1.
    srv = H.Server(DOC).start()
    p = subprocess.run([H.BIN, "serve", "-d", DOC, "-p", str(srv.port), "--host", H.HOST, "--user", "nobody"]
                       + H.transport_args(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10)
    lines = p.stderr.decode().splitlines()
    R.check("a port in use: exit 1, one error line with time, level and pid", p.returncode == 1
            and len(lines) == 1 and LINE.match(lines[0]) and "[error]" in lines[0]
            and "in use" in lines[0].lower(), (p.returncode, lines))
    srv.stop()
    env = dict(os.environ, TERM="xterm")
    p = subprocess.run([H.BIN, "serve", "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                       timeout=10)
    out = p.stdout
    R.check("--help to a pipe: plain text, no overstrike", p.returncode == 0 and b"\b" not in out
            and b"--auth-file" in out and b"--stats-listen" in out, out[:300])


H.part(R, "basic auth", auth_part, stop_servers=True)
H.part(R, "allow and deny", access_part, stop_servers=True)
H.part(R, "request rate", rate_part, stop_servers=True)
H.part(R, "connections per client", conn_part, stop_servers=True)
H.part(R, "error log", error_log_part, stop_servers=True)
H.part(R, "bad values", bad_values_part)
H.part(R, "status totals", status_part, stop_servers=True)
H.part(R, "redirect port", redirect_part, stop_servers=True)
H.part(R, "socket activation", activation_part, stop_servers=True)
H.part(R, "command line", cli_part)
R.finish()
