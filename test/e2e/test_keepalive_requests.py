"""keepalive_requests (Config.t.keepalive_requests), end to end, on the
suite's backend and transport:

1. HTTP/1.1, `--keepalive-requests 3`: on one connection the first two
   answers keep it open, the third says `Connection: close` and the server
   closes; without the option (no limit) a sixth request is still kept.
2. HTTP/2 (h2c with prior knowledge, or ALPN h2 over TLS), the same option:
   three streams answered one after the other, then GOAWAY NO_ERROR naming
   the third stream (5) and the close; without it, no GOAWAY.
3. The configuration file: `keepalive_requests 2;` is served as the option
   is; a reload (SIGHUP) that changes it to 4 gives new connections the new
   limit; `keepalive_requests -1;` is refused by `httpz check` at its
   argument, and `--keepalive-requests -1` by `httpz serve` naming the
   option.
4. A reload that changes an option of the listening sockets (send_lowat,
   backlog, defer_accept), which the sockets kept across reloads could not
   take, is refused with a line saying so and nothing changes (before, it
   was logged as done and silently not applied).
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("keepalive_requests")
H.suite_deadline(R, 60)
H.require_binary(R)

HERE = os.path.dirname(os.path.abspath(__file__))
SYS_PY = "/usr/bin/python3"
TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-keepalive-"))
DOC = os.path.join(TMP, "site")
os.makedirs(DOC)
with open(os.path.join(DOC, "a.txt"), "wb") as f:
    f.write(b"hello\n")


def h1_sequence(port, n):
    """[n] GETs one after the other on one connection: for each answer,
    (status, its Connection field); then whether the server closed."""
    s = H.connect(port)
    rd = H.Reader(s)
    seen = []
    try:
        for _ in range(n):
            try:
                H.send_get(s, "/a.txt")
                r = rd.read_response(timeout=3.0)
            except OSError:
                break
            if r is None:
                break
            seen.append((r.status, (r.header("connection") or "").lower()))
            if seen[-1][1] == "close":
                break
        try:
            rd.read_to_eof(timeout=2.0)
            closed = True
        except OSError:
            closed = False
    finally:
        s.close()
    return seen, closed


def h2_sequence(port, n):
    argv = [SYS_PY, os.path.join(HERE, "keepalive_client.py"), str(port), "1" if H.TLS else "0", str(n)]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    try:
        return json.loads(p.stdout.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": (p.stdout + p.stderr).decode("latin-1")[-800:]}


def http1():
    srv = H.Server(DOC, args=["--keepalive-requests", "3"]).start()
    seen, closed = h1_sequence(srv.port, 5)
    R.check("HTTP/1.1, --keepalive-requests 3: answers 1 and 2 keep the connection, the 3rd closes it",
            seen == [(200, ""), (200, ""), (200, "close")], seen)
    R.check("... and the server closes the connection after it", closed, seen)
    srv.stop_and_check(R)
    srv = H.Server(DOC).start()
    seen, closed = h1_sequence(srv.port, 6)
    R.check("HTTP/1.1, no limit (the default): 6 requests on one connection, none closes it",
            seen == [(200, "")] * 6 and not closed, (seen, closed))
    srv.stop_and_check(R)


def http2():
    srv = H.Server(DOC, args=["--keepalive-requests", "3"]).start()
    r = h2_sequence(srv.port, 5)
    R.check("HTTP/2, --keepalive-requests 3: three streams answered", r.get("answered") == ["200"] * 3, r)
    R.check("... then GOAWAY NO_ERROR with last stream 5 (the 3rd)", r.get("goaway") == 0 and r.get("last_stream_id") == 5, r)
    R.check("... and the connection closes", r.get("closed") is True, r)
    srv.stop_and_check(R)
    srv = H.Server(DOC).start()
    r = h2_sequence(srv.port, 6)
    R.check("HTTP/2, no limit: 6 streams answered, no GOAWAY, the connection stays",
            r.get("answered") == ["200"] * 6 and r.get("goaway") is None and r.get("closed") is False, r)
    srv.stop_and_check(R)


class ConfigServer(H.Server):
    """`httpz serve --config FILE`, the file written for the port chosen."""

    def __init__(self, limit, extra=""):
        super().__init__(docroot=None)
        self.limit = limit
        self.extra = extra
        self.conf_path = os.path.join(TMP, "httpz.conf")

    def write_conf(self):
        tls = ""
        if H.TLS:
            _ca, cert, key = H.tls_files()
            tls = "tls_certificate %s;\ntls_certificate_key %s;\n" % (cert, key)
        io = ("io %s;\n" % H.IO) if H.IO else ""
        with open(self.conf_path, "w") as f:
            f.write("listen 127.0.0.1:%d%s;\n%s%sworkers 1;\ngrace 1s;\nkeepalive_requests %d;\nroot %s;\n%s"
                    % (self.port, " tls" if H.TLS else "", tls, io, self.limit, DOC, self.extra))

    @property
    def argv(self):
        self.write_conf()
        return [self.binary, "serve", "--config", self.conf_path]


def config_file():
    srv = ConfigServer(2).start()
    seen, closed = h1_sequence(srv.port, 4)
    R.check("config file, keepalive_requests 2: the 2nd answer closes", seen == [(200, ""), (200, "close")] and closed,
            (seen, closed))
    srv.limit = 4
    srv.write_conf()
    os.kill(srv.proc.pid, signal.SIGHUP)
    R.check("reload: logged as done",
            H.wait_until(lambda: "configuration read again" in srv.stderr_text(), 5), srv.stderr_text()[-500:])
    time.sleep(0.3)  # the new generation serves once the old one is told to retire
    seen, closed = h1_sequence(srv.port, 6)
    R.check("after the reload to 4: the 4th answer closes", seen == [(200, "")] * 3 + [(200, "close")] and closed,
            (seen, closed))
    srv.stop_and_check(R)
    bad = os.path.join(TMP, "bad.conf")
    with open(bad, "w") as f:
        f.write("root %s;\nkeepalive_requests -1;\n" % DOC)
    p = subprocess.run([H.BIN, "check", "--config", bad], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10)
    err = p.stderr.decode()
    R.check("httpz check: keepalive_requests -1 is refused at its argument (2:20), exit 2",
            p.returncode == 2 and err.startswith(bad + ":2:20: ") and "not a whole number" in err, (p.returncode, err))
    p = subprocess.run([H.BIN, "serve", "-d", DOC, "--keepalive-requests=-1"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=10)
    err = p.stderr.decode()
    R.check("httpz serve --keepalive-requests -1: exit 2 naming the option",
            p.returncode == 2 and "--keepalive-requests must not be negative" in err, (p.returncode, err))


def socket_options():
    srv = ConfigServer(2).start()
    for n, (directive, line) in enumerate([("send_lowat", "send_lowat 8k;\n"), ("backlog", "backlog 64;\n"),
                                           ("defer_accept", "defer_accept off;\n")]):
        srv.extra = line
        srv.limit = 3
        srv.write_conf()
        os.kill(srv.proc.pid, signal.SIGHUP)
        want = "%s changed: the listening sockets keep theirs, that takes a restart" % directive
        R.check("reload changing %s: refused, saying why" % directive,
                H.wait_until(lambda: srv.stderr_text().count(want) == 1, 5), srv.stderr_text()[-600:])
        R.check("... not logged as done", "configuration read again" not in srv.stderr_text(), srv.stderr_text()[-600:])
        seen, closed = h1_sequence(srv.port, 4)
        R.check("... and nothing changed (keepalive_requests still 2)",
                seen == [(200, ""), (200, "close")] and closed, (seen, closed))
    srv.stop_and_check(R)


H.part(R, "HTTP/1.1", http1, stop_servers=True)
H.part(R, "HTTP/2", http2, stop_servers=True)
H.part(R, "configuration file", config_file, stop_servers=True)
H.part(R, "reload: options of the listening sockets", socket_options, stop_servers=True)
R.finish()
