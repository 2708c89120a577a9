"""Logs from the configuration file, end to end, in the suite's backend
(HTTPZ_IO) and transport (HTTPZ_TRANSPORT):

1. `log_format NAME '...'` with nginx's variables: a line of every field, exact,
   over HTTP/1.1 and HTTP/2 (curl).
2. `escape=json`: a hostile User-Agent (quotes, backslashes, a tab, a control
   byte, DEL, UTF-8, malformed UTF-8, a lone surrogate) makes a line json.loads
   reads back, with the valid UTF-8 kept.
3. Per-site and per-location `access_log`: two sites write two files, the server's
   log gets only the site without one, `access_log off` in a location writes
   nothing.
4. syslog: RFC 5424 datagrams to a Python UDP socket and a unix datagram socket,
   facility, severity and tag as configured.
5. The error log read by fail2ban's own filters (Debian's fail2ban: fail2ban-regex
   with filter.d/nginx-http-auth.conf and nginx-limit-req.conf): unknown user,
   password mismatch, rate limit; a denied address by nginx's "access forbidden
   by rule" line; the client address and the site's name in each.
6. SIGUSR1 after a logrotate-style rename: workers running as nobody, the new
   files made and given to them, new lines in the new files, the old files keep
   the old lines, the same worker pids (no reload); a server of one worker
   (no supervisor) reopens in its own process.
"""

import base64
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("logs")
H.suite_deadline(R, 90)
H.require_binary(R)
TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-logs-"))
# Workers as nobody open the files again by path: the directory must let them.
os.chmod(TMP, 0o755)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o644)


A, B = os.path.join(TMP, "a"), os.path.join(TMP, "b")
write(os.path.join(A, "index.html"), "site a\n")
write(os.path.join(A, "quiet", "x.txt"), "quiet\n")
write(os.path.join(A, "priv", "x.txt"), "private\n")
write(os.path.join(B, "index.html"), "site b\n")


def password_hash(pw):
    return subprocess.run(["openssl", "passwd", "-5", "-salt", "e2esalt", pw], check=True,
                          stdout=subprocess.PIPE, timeout=10).stdout.decode().strip()


def basic(user, pw):
    return {"Authorization": "Basic " + base64.b64encode(("%s:%s" % (user, pw)).encode()).decode()}


class ConfigServer(H.Server):
    """`httpz serve --config FILE`, the file written for the port chosen."""

    def __init__(self, make_conf, **kw):
        super().__init__(docroot=None, **kw)
        self.make_conf = make_conf
        self.conf_path = os.path.join(TMP, "httpz-%d.conf" % id(self))

    @property
    def argv(self):
        write(self.conf_path, self.make_conf(self.port))
        return [self.binary, "serve", "--config", self.conf_path]


def head(port, workers=1, user=None):
    listen = "listen 127.0.0.1:%d%s;\n" % (port, " tls" if H.TLS else "")
    tls = ("tls_certificate %s;\ntls_certificate_key %s;\n" % tuple(H.tls_files()[1:])) if H.TLS else ""
    io = ("io %s;\n" % H.IO) if H.IO else ""
    return listen + tls + io + "workers %d;\ngrace 2s;\n" % workers + ("user %s;\n" % user if user else "")


def raw_request(port, raw, timeout=5.0):
    s = H.connect(port, timeout)
    try:
        s.sendall(raw)
        r = H.Reader(s).read_response(timeout=timeout)
        return r.status if r else None
    finally:
        s.close()


def get(port, path, host, headers=None):
    h = {"Host": host}
    h.update(headers or {})
    st, _, _ = H.request(port, "GET", path, headers=h)
    return st


def lines_of(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "strict").splitlines()
    except OSError:
        return []


def wait_lines(path, pred, timeout=5):
    return H.wait_until(lambda: [l for l in lines_of(path) if pred(l)], timeout) or []


FIELDS = ("$remote_addr|$request|$status|$body_bytes_sent|$http_referer|$http_user_agent|$host|$http_host|"
          "$server_name|$request_method|$request_uri|$args|$server_protocol|$scheme|$https|$http_x_test|"
          "$request_completion|$remote_user|$request_id")
TIMES = "$time_iso8601|$time_local|$msec|$request_time|$pid|$ssl_protocol"


# ----------------------------------------------------------------------------

def formats_and_sites():
    a_log, b_log, main_log, json_log = (os.path.join(TMP, n) for n in ("a.log", "b.log", "main.log", "j.log"))

    def conf(port):
        return (head(port, workers=2) +
                "log_format fields '%s';\n" % FIELDS +
                "log_format times \"%s\";\n" % TIMES +
                "log_format j escape=json '{\"ua\":\"$http_user_agent\",\"req\":\"$request\",' "
                "'\"ref\":\"$http_referer\",\"status\":$status,\"host\":\"$host\",\"t\":\"$time_iso8601\"}';\n"
                "access_log %s;\n" % main_log +
                "site a.test {\n  root %s;\n  access_log %s fields;\n" % (A, a_log) +
                "  location /quiet/ { access_log off; }\n"
                "  location /j/ { access_log %s j; }\n"
                "  location /t/ { access_log %s times; }\n}\n" % (json_log, os.path.join(TMP, "t.log")) +
                "site b.test {\n  root %s;\n  access_log %s combined;\n}\n" % (B, b_log) +
                "site c.test {\n  root %s;\n}\n" % B)

    srv = ConfigServer(conf, ready_path="/").start()
    try:
        p = srv.port
        scheme = "https" if H.TLS else "http"
        # 1. Every field, exact.
        st = get(p, "/?x=1&y=%22", "A.Test:%d" % p,
                 {"Referer": "http://ref.example/", "User-Agent": "agent/1.0", "X-Test": "t-value",
                  **basic("alice", "secret")})
        R.check("a.test answers 200", st == 200, st)
        want = ("127.0.0.1|GET /?x=1&y=%%22 HTTP/1.1|200|7|http://ref.example/|agent/1.0|a.test|A.Test:%d|a.test|"
                "GET|/?x=1&y=%%22|x=1&y=%%22|HTTP/1.1|%s|%s|t-value|OK|alice|-" % (p, scheme, "on" if H.TLS else "-"))
        got = wait_lines(a_log, lambda l: "/?x=1" in l)
        R.check("log_format: every field exact", got == [want], (got, want))
        # Absent values: '-'.
        get(p, "/nothing", "a.test")
        got = wait_lines(a_log, lambda l: "/nothing" in l)
        want = ("127.0.0.1|GET /nothing HTTP/1.1|404|%%d|-|-|a.test|a.test|a.test|GET|/nothing|-|HTTP/1.1|%s|%s|-|OK|-|-"
                % (scheme, "on" if H.TLS else "-"))
        R.check("log_format: absent values are '-'",
                len(got) == 1 and re.fullmatch(re.escape(want).replace("%d", r"\d+"), got[0]), (got, want))
        # Times.
        t0 = time.time()
        get(p, "/t/x", "a.test")
        got = wait_lines(os.path.join(TMP, "t.log"), lambda l: True)
        m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\+00:00\|(\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d) \+0000\|"
                         r"(\d+\.\d{3})\|(\d+\.\d{3})\|(\d+)\|(.*)", got[0] if got else "")
        ok = False
        if m:
            iso = time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")
            clf = time.strptime(m.group(2), "%d/%b/%Y:%H:%M:%S")
            ok = (iso == clf and abs(float(m.group(3)) - t0) < 5 and float(m.group(4)) < 5
                  and int(m.group(5)) in srv.children()
                  and m.group(6) == ("-" if not H.TLS else m.group(6)) and (not H.TLS or m.group(6).startswith("TLSv1.")))
        R.check("log_format: $time_iso8601, $time_local, $msec, $request_time, $pid, $ssl_protocol", ok, got)
        # HTTP/2 (curl), the same format.
        h2 = ["--http2"] if H.TLS else ["--http2-prior-knowledge"]
        c = H.curl(h2 + ["-o", "/dev/null", "-H", "Host: a.test", "-A", "curl-h2", "-e", "http://r2/",
                         H.url(p, "/?h2=1")])
        got = wait_lines(a_log, lambda l: "h2=1" in l)
        R.check("HTTP/2: the line with HTTP/2.0", len(got) == 1 and got[0].startswith(
            "127.0.0.1|GET /?h2=1 HTTP/2.0|200|7|http://r2/|curl-h2|a.test|a.test|a.test|GET|/?h2=1|h2=1|HTTP/2.0|"),
            (got, c.stderr))
        # 2. escape=json with a hostile User-Agent.
        hostile = b'q"uo\\te\ttab \xc3\xa9t\xc3\xa9 \xe2\x82\xac bad:\xff\xfe\xc3( surrogate:\xed\xa0\x80 end'
        st = raw_request(p, b"GET /j/x HTTP/1.1\r\nHost: a.test\r\nUser-Agent: " + hostile +
                         b"\r\nReferer: \\\"\r\nConnection: close\r\n\r\n")
        R.check("hostile User-Agent: answered (404)", st == 404, st)
        ctl = raw_request(p, b"GET /j/ctl HTTP/1.1\r\nHost: a.test\r\nUser-Agent: a\x01b\x7fc\x1b[31m\r\n"
                          b"Connection: close\r\n\r\n")
        got = wait_lines(json_log, lambda l: True)
        objs = []
        try:
            objs = [json.loads(l) for l in got]
        except ValueError as e:
            objs = [repr(e)]
        o = objs[0] if objs else {}
        want_ua = 'q"uo\\te\ttab été € bad:\u00ff\u00fe\u00c3( surrogate:\u00ed\u00a0\u0080 end'
        R.check("escape=json: json.loads reads the line back, valid UTF-8 kept",
                isinstance(o, dict) and o.get("ua") == want_ua and o.get("ref") == '\\"' and o.get("status") == 404
                and o.get("host") == "a.test", (got, objs))
        # The parser refuses those bytes: the 400's line has no site (its head
        # was not read), so it is the server's, with no request fields.
        R.check("a control byte, DEL and an escape sequence: 400, logged by the server's log without the request",
                ctl == 400 and len(objs) == 1 and wait_lines(main_log, lambda l: '"-" 400 ' in l) != [],
                (ctl, got, lines_of(main_log)))
        R.check("escape=json: every line is valid UTF-8 JSON text",
                all(isinstance(x, dict) for x in objs) and all(l.isprintable() for l in got), got)
        # 3. Sites and locations.
        get(p, "/", "b.test", {"User-Agent": "to-b"})
        get(p, "/?to-c", "c.test")
        get(p, "/quiet/x.txt", "a.test", {"User-Agent": "quiet"})
        get(p, "/", "a.test", {"User-Agent": "after-quiet"})
        wait_lines(a_log, lambda l: "after-quiet" in l)
        b_lines = wait_lines(b_log, lambda l: True)
        main_lines = wait_lines(main_log, lambda l: "to-c" in l)
        R.check("site b: its own file, combined", len(b_lines) == 1 and '"GET / HTTP/1.1" 200 7 "-" "to-b"' in b_lines[0],
                b_lines)
        R.check("site c (no access_log): the server's log, and only it",
                len(main_lines) == 1 and all("/?x=1" not in l and "/j/" not in l and "/quiet/" not in l
                                             for l in lines_of(main_log)),
                lines_of(main_log))
        R.check("access_log off in a location: no line anywhere",
                not any("/quiet/" in l for l in lines_of(a_log) + lines_of(main_log) + lines_of(b_log) + lines_of(json_log)),
                lines_of(a_log))
        R.check("a.test's lines only in a.test's files",
                not any("agent/1.0" in l for l in lines_of(main_log) + lines_of(b_log)), lines_of(main_log))
    finally:
        srv.stop_and_check(R, "formats and sites: exits 0")


def syslog():
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.settimeout(5)
    upath = os.path.join(TMP, "dev-log")
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    unix.bind(upath)
    os.chmod(upath, 0o666)
    unix.settimeout(5)

    def conf(port):
        return (head(port) +
                "log_format short '$host $status $request \"$http_user_agent\"';\n"
                "site a.test {\n  root %s;\n  access_log syslog:server=127.0.0.1:%d,facility=local7,tag=httpz short;\n}\n"
                % (A, udp.getsockname()[1]) +
                "site b.test {\n  root %s;\n  access_log syslog:server=unix:%s,facility=local0,severity=notice,tag=web short;\n}\n"
                % (B, upath))

    srv = ConfigServer(conf, ready_path="/").start()
    rfc5424 = re.compile(r"<(\d+)>1 (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)) (\S+) (\S+) (\d+|-) (\S+) (-|\[.*\]) (.*)")
    try:
        p = srv.port
        pids = srv.children()

        def recv_all(sock, want):
            out = []
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                try:
                    out.append(sock.recv(65536).decode("utf-8"))
                except socket.timeout:
                    break
                if any(want in m for m in out):
                    break
            return [m for m in out if want in m]

        for i in range(3):
            get(p, "/", "a.test", {"User-Agent": "udp-%d" % i})
        get(p, "/", "b.test", {"User-Agent": "unix-1"})
        udp_msgs = recv_all(udp, "udp-2")
        unix_msgs = recv_all(unix, "unix-1")
        got = [rfc5424.fullmatch(m) for m in udp_msgs]
        R.check("syslog over UDP: one RFC 5424 datagram per line, <190> (local7.info), tag httpz, the worker's pid",
                len(got) == 1 and got[0] is not None and got[0].group(1) == "190" and got[0].group(4) == "httpz"
                and int(got[0].group(5)) in pids and got[0].group(8) == 'a.test 200 GET / HTTP/1.1 "udp-2"',
                (udp_msgs, pids))
        got = [rfc5424.fullmatch(m) for m in unix_msgs]
        R.check("syslog over a unix datagram socket: <133> (local0.notice), tag web",
                len(got) == 1 and got[0] is not None and got[0].group(1) == "133" and got[0].group(4) == "web"
                and got[0].group(8) == 'b.test 200 GET / HTTP/1.1 "unix-1"', unix_msgs)
        # The receiver restarts (a new socket at the path): SIGUSR1 connects
        # the workers again.
        unix.close()
        os.unlink(upath)
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        unix.bind(upath)
        os.chmod(upath, 0o666)
        unix.settimeout(5)
        def sockets():
            out = set()
            for pid in pids:
                try:
                    for fd in os.listdir("/proc/%d/fd" % pid):
                        try:
                            t = os.readlink("/proc/%d/fd/%s" % (pid, fd))
                        except OSError:
                            continue
                        if t.startswith("socket:"):
                            out.add(t)
                except OSError:
                    pass
            return out
        before = sockets()
        os.kill(srv.proc.pid, signal.SIGUSR1)
        H.wait_until(lambda: srv.stderr_text().count("SIGUSR1: logs reopened") >= 1, 5)
        # The worker connected a new socket (no client is connected now).
        H.wait_until(lambda: sockets() - before, 5)
        get(p, "/", "b.test", {"User-Agent": "unix-2"})
        unix_msgs = recv_all(unix, "unix-2")
        R.check("syslog over a unix socket: after its receiver restarted, SIGUSR1 connects again",
                len(unix_msgs) == 1, (unix_msgs, srv.stderr_text()[-600:]))
    finally:
        srv.stop_and_check(R, "syslog: exits 0")
        udp.close()
        unix.close()


def syslog_stall():
    """A unix datagram receiver that never reads: its queue fills at once;
    the worker drops the lines and keeps answering (before: it blocked in
    write(2) at its first flush, every client timing out)."""
    upath = os.path.join(TMP, "dev-log-stalled")
    sink = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sink.bind(upath)
    os.chmod(upath, 0o666)

    def conf(port):
        return (head(port) + "access_log syslog:server=unix:%s;\n" % upath +
                "site a.test {\n  root %s;\n}\n" % A)

    srv = ConfigServer(conf, ready_path="/").start()
    try:
        answered = 0
        t0 = time.monotonic()
        sock = None
        try:
            for i in range(2000):
                if sock is None:
                    sock = H.connect(srv.port, 3)
                    rd = H.Reader(sock)
                H.send_get(sock, "/?n=%d" % i, {"Host": "a.test"})
                r = rd.read_response(timeout=3)
                if r is None or r.status != 200:
                    break
                answered += 1
                if time.monotonic() - t0 > 40:
                    break
        except (OSError, H.ProtocolError, socket.timeout):
            pass
        finally:
            if sock is not None:
                sock.close()
        took = time.monotonic() - t0
        R.check("a stalled syslog receiver: 2000 requests all answered in bounded time (%.1f s)" % took,
                answered == 2000 and took < 40, (answered, took))
        R.check("the dropped lines are counted in the error log",
                H.wait_until(lambda: re.search(r"syslog: \d+ access log lines dropped", srv.stderr_text()), 5)
                is not None, srv.stderr_text()[-800:])
    finally:
        srv.stop_and_check(R, "stalled syslog: exits 0")
        sink.close()


def escape_none_forgery():
    """escape=none and $remote_user (decoded from any Authorization header):
    a user name holding CR LF must not forge a second line in the file nor
    a datagram of its own over syslog."""
    upath = os.path.join(TMP, "dev-log-none")
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    unix.bind(upath)
    os.chmod(upath, 0o666)
    unix.settimeout(0.5)
    flog = os.path.join(TMP, "none.log")

    def conf(port):
        return (head(port) + "log_format raw escape=none '$remote_user [$request] $status';\n" +
                "site a.test {\n  root %s;\n  access_log %s raw;\n}\n" % (A, flog) +
                "site b.test {\n  root %s;\n  access_log syslog:server=unix:%s raw;\n}\n" % (B, upath))

    srv = ConfigServer(conf, ready_path="/").start()
    try:
        forged = "evil\r\n6.6.6.6 [GET /forged HTTP/1.1] 200\x00\x1b[31m\tx"
        auth = {"Authorization": "Basic " + base64.b64encode((forged + ":pw").encode("latin-1")).decode()}
        st = get(srv.port, "/?none", "a.test", auth)
        get(srv.port, "/?none", "b.test", auth)
        lines = wait_lines(flog, lambda l: "/?none" in l)
        want = "evil\\x0D\\x0A6.6.6.6 [GET /forged HTTP/1.1] 200\\x00\\x1B[31m\tx [GET /?none HTTP/1.1] 200"
        R.check("escape=none: CR, LF, NUL and ESC from $remote_user written \\xHH (tab kept), one line",
                st == 200 and lines == [want] and sum("forged" in l for l in lines_of(flog)) == 1,
                (st, lines_of(flog), want))
        msgs = []
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                msgs.append(unix.recv(65536).decode("utf-8", "replace"))
            except socket.timeout:
                if msgs:
                    break
        R.check("escape=none over syslog: one datagram, the client's value not split",
                len(msgs) == 1 and msgs[0].endswith(" " + want), msgs)
    finally:
        srv.stop_and_check(R, "escape=none: exits 0")
        unix.close()


def fail2ban():
    users = os.path.join(TMP, "users")
    write(users, "alice:%s\n" % password_hash("right"))
    err = os.path.join(TMP, "error.log")

    def conf(port):
        return (head(port) + "error_log %s;\n" % err +
                "limit_req_zone $binary_remote_addr zone=login:1m rate=1r/m;\n"
                "site g.test {\n  root %s;\n  auth_basic_user_file %s;\n" % (A, users) +
                "  location /priv/ { auth_basic Admin; }\n"
                "  location /deny/ { deny 127.0.0.0/8; }\n"
                "  location /slow/ { limit_req 1r/m 1; }\n"
                "  location /login/ { limit_req zone=login burst=1; }\n}\n")

    srv = ConfigServer(conf, ready_path="/").start()
    try:
        p = srv.port
        codes = [get(p, "/priv/x.txt", "g.test", basic("mallory", "guess")),
                 get(p, "/priv/x.txt", "g.test", basic("alice", "wrong")),
                 get(p, "/priv/x.txt", "g.test", basic("alice", "right")),
                 get(p, "/priv/x.txt", "g.test"),
                 get(p, "/deny/x", "g.test")] + [get(p, "/slow/x", "g.test") for _ in range(3)] + \
            [get(p, "/login/x", "g.test") for _ in range(3)]
        R.check("refusals answered: 401, 401, 200, 401, 403, then 429s", codes[:5] == [401, 401, 200, 401, 403]
                and codes[5:8].count(429) == 2 and codes[8:] == [404, 404, 429], codes)
        text = H.wait_until(lambda: open(err).read() if open(err).read().count("limiting requests") >= 3 else "", 5)
        lines = [l for l in text.splitlines() if "#0: *" in l]
        R.check("the zone's name in its line; 'limit_req' for a limit without a zone",
                sum('by zone "login", client: 127.0.0.1,' in l for l in lines) == 1
                and sum('by zone "limit_req", client: 127.0.0.1,' in l for l in lines) == 2, lines)
        R.check("four kinds of lines, each with the client and the site's name",
                len(lines) == 6 and all(", client: 127.0.0.1, server: g.test, request: \"GET /" in l
                                        and l.endswith('host: "g.test"') for l in lines), text[-1500:])
        R.check("no line for a request without credentials (nginx's info level)",
                "no user/password" not in text, text[-800:])

        def f2b(filt):
            r = subprocess.run(["fail2ban-regex", err, filt], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=60)
            out = r.stdout.decode("utf-8", "replace")
            m = re.search(r"Lines: \d+ lines, \d+ ignored, (\d+) matched", out)
            hosts = re.findall(r"\|\s+127\.0\.0\.1\s+\(", out)
            return (int(m.group(1)) if m else -1), out

        auth = "/etc/fail2ban/filter.d/nginx-http-auth.conf"
        limit = "/etc/fail2ban/filter.d/nginx-limit-req.conf"
        R.check("fail2ban's filters are installed (scripts/deps.sh: fail2ban)",
                os.path.exists(auth) and os.path.exists(limit) and shutil.which("fail2ban-regex"), (auth, limit))
        n, out = f2b(auth)
        R.check("fail2ban nginx-http-auth: the unknown user and the password mismatch (2 lines)", n == 2, out[-1500:])
        n, out = f2b(limit)
        R.check("fail2ban nginx-limit-req: the three refused requests (3 lines)", n == 3, out[-1500:])
        n, out = f2b(r'^\s*\[error\] \d+#\d+: \*\d+ access forbidden by rule, client: <HOST>, server: \S*, '
                     r'request: "\S+ \S+ HTTP/\d+\.\d+", host: "\S+"$')
        R.check("nginx's 'access forbidden by rule' line, read by fail2ban-regex (1 line)", n == 1, out[-1500:])
    finally:
        srv.stop_and_check(R, "fail2ban: exits 0")


def refusal_overflow():
    """The guard's error-log line at its longest: a 250-byte user of backslashes
    (1000 escaped; 255 bytes of credentials at most), a user file's path over 1 KiB, a site name over
    2 KiB, 2 KiB of target bytes escaped to 8 KiB and a 2 KiB Host: more
    than the line's 12 KiB buffer. It is cut, marked with "...", and still
    ends with its newline (before: written past the buffer's end)."""
    users = os.path.join(TMP, *(["u" * 220] * 5 + ["users"]))
    write(users, "alice:%s\n" % password_hash("right"))
    err = os.path.join(TMP, "overflow-error.log")
    name = "a" * 2100  # the Host; the default site answers it

    def conf(port):
        return (head(port) + "error_log %s;\n" % err +
                "site x.test default {\n  root %s;\n  auth_basic_user_file %s;\n" % (A, users) +
                "  location / { auth_basic Admin; }\n}\n")

    srv = ConfigServer(conf, ready_path="/").start()
    try:
        raw = (b"GET /" + b"\xe9" * 2100 + b" HTTP/1.1\r\nHost: " + name.encode() + b"\r\nAuthorization: " +
               basic("\\" * 250, "p")["Authorization"].encode() + b"\r\n\r\n")
        st = raw_request(srv.port, raw)
        line = H.wait_until(lambda: [l for l in open(err, "rb").read().split(b"\n") if b"was not found in" in l], 5)
        line = line[0] if line else b""
        R.check("the longest refusal line: answered 401, cut at the buffer, marked, one whole line",
                st == 401 and b'user "' + b"\\x5c" * 250 + b'" was not found in "' + users.encode()[:1024] + b'"' in line
                and b", server: x.test, request: \"GET /" + b"\\xe9" * 10 in line
                and line.endswith(b'..."') and len(line) + 1 <= 12288,
                (st, len(line), line[:200], line[-200:], open(err, "rb").read()[-600:]))
        R.check("the server still serves after it", get(srv.port, "/", name) == 401, "")
    finally:
        srv.stop_and_check(R, "refusal overflow: exits 0")


def holding(pids, suffix):
    """The descriptors of [pids] still open on a file whose name ends in
    [suffix] (a rotated log)."""
    held = []
    for pid in pids:
        d = "/proc/%d/fd" % pid
        try:
            for fd in os.listdir(d):
                try:
                    target = os.readlink(os.path.join(d, fd))
                except OSError:
                    continue
                if target.endswith(suffix):
                    held.append((pid, fd, target))
        except OSError:
            pass
    return held


def usr1():
    logs = os.path.join(TMP, "rot")
    os.makedirs(logs)
    os.chmod(logs, 0o755)
    access, site, err = (os.path.join(logs, n) for n in ("access.log", "site.log", "error.log"))
    user = "nobody" if os.geteuid() == 0 else None

    def conf(port):
        return (head(port, workers=2, user=user) + "access_log %s;\nerror_log %s;\n" % (access, err) +
                "site a.test {\n  root %s;\n}\n" % A +
                "site b.test {\n  root %s;\n  access_log %s combined;\n}\n" % (B, site))

    srv = ConfigServer(conf, ready_path="/").start()
    try:
        p = srv.port
        pids = sorted(srv.children())
        for i in range(10):
            get(p, "/before-%d" % i, "a.test")
            get(p, "/before-%d" % i, "b.test")
        wait_lines(access, lambda l: "/before-9" in l)
        wait_lines(site, lambda l: "/before-9" in l)
        for f in (access, site, err):
            os.rename(f, f + ".1")
        os.kill(srv.proc.pid, signal.SIGUSR1)
        H.wait_until(lambda: "SIGUSR1: logs reopened" in "\n".join(lines_of(err)), 5)
        R.check("SIGUSR1: the supervisor made the new error log and says so",
                "SIGUSR1: logs reopened (2 workers)" in "\n".join(lines_of(err)), lines_of(err) + lines_of(err + ".1")[-3:])
        if user:
            uid = pwd.getpwnam(user).pw_uid
            R.check("the new files belong to the workers' user",
                    all(os.path.exists(f) and os.stat(f).st_uid == uid for f in (access, site, err)),
                    [(f, os.path.exists(f) and os.stat(f).st_uid) for f in (access, site, err)])
        R.check("the new files are created 0640 (not world-readable)",
                all(os.path.exists(f) and os.stat(f).st_mode & 0o777 == 0o640 for f in (access, site, err)),
                [(f, os.path.exists(f) and oct(os.stat(f).st_mode & 0o777)) for f in (access, site, err)])
        # Each worker has reopened once none holds a rotated file.
        everyone = pids + [srv.proc.pid]
        R.check("the supervisor and every worker reopened their files (none holds a rotated one)",
                H.wait_until(lambda: holding(everyone, ".log.1") == [], 5) or holding(everyone, ".log.1") == [],
                holding(everyone, ".log.1"))
        for i in range(20):
            get(p, "/after-%d" % i, "a.test")
            get(p, "/after-%d" % i, "b.test")
        wait_lines(access, lambda l: "/after-19" in l)
        wait_lines(site, lambda l: "/after-19" in l)
        time.sleep(1.2)  # a last flush
        for f, name in ((access, "server's access log"), (site, "site's access log")):
            new, old = lines_of(f), lines_of(f + ".1")
            R.check("%s: the 20 new lines in the new file" % name,
                    sum("/after-" in l for l in new) == 20 and not any("/before-" in l for l in new), (new, old))
            R.check("%s: the old file keeps the 10 old lines, none new" % name,
                    sum("/before-" in l for l in old) == 10 and not any("/after-" in l for l in old), old)
        R.check("the same workers serve (no reload)", sorted(srv.children()) == pids, (pids, srv.children()))
        text = "\n".join(lines_of(err) + lines_of(err + ".1"))
        R.check("no reload, no restart logged", "SIGHUP" not in text and "restarting" not in text, text[-800:])
        # Twice in a row: the file made by the first is reopened as well.
        os.rename(access, access + ".2")
        os.kill(srv.proc.pid, signal.SIGUSR1)
        H.wait_until(lambda: "\n".join(lines_of(err)).count("SIGUSR1: logs reopened") >= 2, 5)
        H.wait_until(lambda: holding(pids + [srv.proc.pid], ".log.2") == [], 5)
        get(p, "/third", "a.test")
        R.check("a second rotation: the next file gets the next line",
                wait_lines(access, lambda l: "/third" in l) != [] and
                not any("/third" in l for l in lines_of(access + ".2")), lines_of(access))
    finally:
        srv.stop_and_check(R, "SIGUSR1: exits 0")


def usr1_symlink():
    """SIGUSR1 and the start never follow a symlink (CVE-2016-1247): the log
    directory belongs to the workers' user, who replaces the rotated logs by
    symlinks and a hard link to root's files; the supervisor (root) must
    neither write to them nor give them away."""
    if os.geteuid() != 0:
        R.check("symlinked logs: skipped (needs root to run workers as nobody)", True)
        return
    nobody = pwd.getpwnam("nobody").pw_uid
    logs = os.path.join(TMP, "rv")
    os.makedirs(logs)
    os.chown(logs, nobody, -1)
    os.chmod(logs, 0o755)
    vic = os.path.join(TMP, "victims")
    os.makedirs(vic)
    os.chmod(vic, 0o755)
    access, site, err = (os.path.join(logs, n) for n in ("access.log", "site.log", "error.log"))
    victims = [os.path.join(vic, n) for n in ("v-access", "v-site", "v-error")]
    for v in victims:
        with open(v, "w") as f:
            f.write("root's secret\n")
        os.chmod(v, 0o600)

    def conf(port):
        return (head(port, workers=2, user="nobody") + "access_log %s;\nerror_log %s;\n" % (access, err) +
                "site a.test {\n  root %s;\n}\n" % A +
                "site b.test {\n  root %s;\n  access_log %s combined;\n}\n" % (B, site))

    srv = ConfigServer(conf, ready_path="/").start()
    try:
        p = srv.port
        get(p, "/before", "a.test")
        get(p, "/before", "b.test")
        for f in (access, site, err):
            os.rename(f, f + ".1")
        os.symlink(victims[0], access)
        os.link(victims[1], site)  # two links: not a log of ours
        os.symlink(victims[2], err)
        os.kill(srv.proc.pid, signal.SIGUSR1)
        H.wait_until(lambda: "SIGUSR1: logs reopened" in "\n".join(lines_of(err + ".1")), 5)
        for i in range(5):
            get(p, "/after-%d" % i, "a.test")
            get(p, "/after-%d" % i, "b.test")
        time.sleep(1.5)  # the workers' flush
        st = [os.stat(v) for v in victims]
        R.check("SIGUSR1 through symlinks and a hard link: root's files stay root's",
                all(s.st_uid == 0 for s in st), [(v, s.st_uid) for v, s in zip(victims, st)])
        content = [open(v).read() for v in victims]
        R.check("SIGUSR1 through symlinks and a hard link: nothing written to root's files",
                all(c == "root's secret\n" for c in content), content)
        text = "\n".join(lines_of(err + ".1"))
        R.check("the refusals are logged, the old logs kept",
                "access.log: a symbolic link: refused" in text and "site.log: 2 hard links: refused" in text
                and "error.log: a symbolic link: refused" in text, text[-1500:])
        R.check("the server still serves, the lines in the old files",
                get(p, "/?last", "a.test") == 200 and wait_lines(access + ".1", lambda l: "/?last" in l) != [],
                lines_of(access + ".1")[-3:])
    finally:
        srv.stop_and_check(R, "symlinked logs: exits 0")
    # At start: a symlinked log is refused, nothing created through it.
    for f in (access, site, err):
        os.unlink(f)
    dangling = os.path.join(vic, "created-through")
    os.symlink(dangling, access)
    port = H.free_port()
    cpath = os.path.join(TMP, "rv.conf")
    write(cpath, conf(port))
    try:
        r = subprocess.run([H.BIN, "serve", "--config", cpath], capture_output=True, timeout=10)
    except subprocess.TimeoutExpired as e:  # it started: it followed the symlink
        r = subprocess.CompletedProcess(e.cmd, "started", e.stdout or b"", e.stderr or b"")
    R.check("start: a symlinked access log is refused (exit 1), nothing created through it",
            r.returncode == 1 and not os.path.lexists(dangling)
            and "access.log: a symbolic link: refused" in "\n".join(lines_of(err)),
            (r.returncode, r.stderr[-600:], lines_of(err)[-3:]))
    r = subprocess.run([H.BIN, "check", "--config", cpath], capture_output=True, timeout=20)
    R.check("httpz check: a symlinked log is refused, nothing created through it",
            r.returncode != 0 and not os.path.lexists(dangling) and b"symbolic link" in r.stderr + r.stdout,
            (r.returncode, r.stdout[-300:], r.stderr[-600:]))


def usr1_alone():
    """One worker, no supervisor: the server's own process reopens."""
    d = os.path.join(TMP, "alone")
    os.makedirs(d)
    log = os.path.join(d, "access.log")
    srv = H.Server(A, workers=1, args=["--access-log", log]).start()
    try:
        p = srv.port
        get(p, "/one", "a.test")
        wait_lines(log, lambda l: "/one" in l)
        os.rename(log, log + ".1")
        os.kill(srv.proc.pid, signal.SIGUSR1)
        H.wait_until(lambda: os.path.exists(log), 5)
        get(p, "/two", "a.test")
        R.check("one worker: SIGUSR1 reopens (no exit), the next line in the new file",
                srv.alive() and wait_lines(log, lambda l: "/two" in l) != []
                and not any("/two" in l for l in lines_of(log + ".1")), (lines_of(log), lines_of(log + ".1")))
    finally:
        srv.stop_and_check(R, "one worker: exits 0")


H.part(R, "custom formats, escape=json, per-site logs", formats_and_sites, stop_servers=True)
H.part(R, "syslog", syslog, stop_servers=True)
H.part(R, "a stalled syslog receiver", syslog_stall, stop_servers=True)
H.part(R, "escape=none and a forged $remote_user", escape_none_forgery, stop_servers=True)
H.part(R, "fail2ban", fail2ban, stop_servers=True)
H.part(R, "the longest refusal line", refusal_overflow, stop_servers=True)
H.part(R, "SIGUSR1 reopens", usr1, stop_servers=True)
H.part(R, "SIGUSR1 and symlinked logs", usr1_symlink, stop_servers=True)
H.part(R, "SIGUSR1 with one worker", usr1_alone, stop_servers=True)
R.finish()
