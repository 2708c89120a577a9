#!/usr/bin/env python3
"""Limits shared by the workers (`limit_req_zone`, `limit_req zone=NAME`,
`limit_req_status`), end to end with `--workers 2` in the suite's backend
(HTTPZ_IO) and transport (HTTPZ_TRANSPORT):

1. Shared: rate 1r/s burst=10, 40 requests each on a new connection (spread by
   the kernel over both workers): 11 pass, plus one per second the run takes
   (before the zones each worker counted alone: about twice as many). The same
   with the older `limit_req 1r/s 11`.
2. HTTP/2: 15 requests as streams of one connection (curl) are counted one by one.
3. Keys: a zone keyed by a header (X-Api-Key: each value its own count, no header
   not limited), by a cookie, by the site; the refusal's status (429 by default
   and as `limit_req_status 429` sets it, 503 where a location says so), with
   Retry-After.
4. A full zone (16 entries) keyed by address refuses a 17th client with 503
   and Retry-After; one keyed by a header, filled by one client with 40
   invented values, still admits new values (the entry closest to expiry is
   evicted: before, 503 for every new value for the whole interval).
5. `limit_conn NAME N` over `limit_conn_zone`: counted across both workers.
6. Reload: a zone of the same name, key and size keeps its counts; one whose size
   changed starts empty.
7. `httpz serve --workers 2 --limit-rate 1 --limit-burst 11 --limit-conn 2`: the
   same shared counting without a configuration file.
8. `httpz check`: errors of the new directives at FILE:LINE:COL.
9. A reload that fails after making a new 64m zone gives its mapping back:
   the supervisor's shared mappings (/proc/PID/maps) are the same after it
   (before, each failed reload kept its new zones mapped for good).
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

R = H.Results("limit_zones")
H.suite_deadline(R, 100)
H.require_binary(R)
TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-zones-"))
ROOT = os.path.join(TMP, "www")
for d in ("a", "old", "h2", "key", "cookie", "tiny", "site", "conn", "fill", "big"):
    H.write_file(ROOT, "%s/x.txt" % d, b"x\n")
H.write_file(ROOT, "index.html", b"home\n")
ERROR_LOG = os.path.join(TMP, "error.log")
SYS_PY = "/usr/bin/python3"  # Debian's python3-h2 lives there
# PORT TLS PATH N: N GETs of PATH as streams of one connection, each after the
# previous one ended; prints their statuses as JSON.
H2_STREAMS = """
import json, sys
sys.path.insert(0, %r)
import h2_client
port, tls, path, n = int(sys.argv[1]), sys.argv[2] == "1", sys.argv[3], int(sys.argv[4])
c = h2_client.Client(port, tls)
out = []
for _ in range(n):
    sid = c.get(path)
    c.pump(lambda: sid in c.ended, timeout=10)
    out.append(int(c.heads.get(sid, {}).get(":status", "0")))
print(json.dumps(out))
""" % os.path.dirname(os.path.abspath(__file__))


def conf(port, sessions="64k", conn=""):
    listen = "listen 127.0.0.1:%d%s;\n" % (port, " tls" if H.TLS else "")
    tls = ""
    if H.TLS:
        _ca, cert, key = H.tls_files()
        tls = "tls_certificate %s;\ntls_certificate_key %s;\n" % (cert, key)
    io = ("io %s;\n" % H.IO) if H.IO else ""
    return (listen + tls + io + "workers 2;\ngrace 3s;\nerror_log %s;\nroot %s;\n" % (ERROR_LOG, ROOT) + conn +
            "limit_req_status 429;\n"
            "limit_req_zone $binary_remote_addr zone=addr:1m rate=1r/s;\n"
            "limit_req_zone $binary_remote_addr zone=streams:1m rate=1r/s;\n"
            "limit_req_zone $http_x_api_key zone=keys:64k rate=1r/m;\n"
            "limit_req_zone $cookie_session zone=sessions:%s rate=1r/m;\n" % sessions +
            "limit_req_zone $binary_remote_addr zone=tiny:512 rate=1r/m;\n"
            "limit_req_zone $server_name zone=site:64k rate=1r/m;\n"
            "limit_req_zone $http_x_fill zone=fill:512 rate=1r/m;\n"
            "location /a/ { limit_req zone=addr burst=10 nodelay; }\n"
            "location /old/ { limit_req 1r/s 11; }\n"
            "location /h2/ { limit_req zone=streams burst=10; }\n"
            "location /key/ { limit_req zone=keys burst=2; }\n"
            "location /cookie/ { limit_req zone=sessions burst=2; limit_req_status 503; }\n"
            "location /tiny/ { limit_req zone=tiny burst=5; }\n"
            "location /site/ { limit_req zone=site burst=3; }\n"
            "location /fill/ { limit_req zone=fill burst=5; }\n")


class ConfServer(H.Server):
    def __init__(self, make_conf, **kw):
        super().__init__(docroot=None, **kw)
        self.make_conf = make_conf
        self.conf_path = os.path.join(TMP, "httpz-%d.conf" % id(self))

    def write_conf(self, text=None):
        with open(self.conf_path, "w") as f:
            f.write(text if text is not None else self.make_conf(self.port))

    @property
    def argv(self):
        self.write_conf()
        return [self.binary, "serve", "--config", self.conf_path]


def get(port, path, headers=None, src=None):
    """One GET on a new connection (from [src]): (status, headers dict)."""
    h = {"Host": "127.0.0.1", "Connection": "close"}
    h.update(headers or {})
    s = H.connect(port, timeout=5.0, src=src)
    try:
        H.send_get(s, path, h)
        r = H.Reader(s).read_response(timeout=5.0)
        if r is None:
            return None, {}
        return r.status, {k.lower(): v for k, v in r.headers}
    finally:
        s.close()


def statuses(port, path, n, headers=None):
    return [get(port, path, headers)[0] for _ in range(n)]


def burst_on_new_connections(srv, path, label):
    t0 = time.monotonic()
    codes = statuses(srv.port, path, 40)
    took = time.monotonic() - t0
    passed = codes.count(200)
    # 11 at once (burst=10 beyond the first), then one a second.
    most = 11 + int(took) + 1
    R.check("%s: %d of 40 new connections passed in %.1f s (11 to %d; each worker alone: about 2x)"
            % (label, passed, took, most),
            11 <= passed <= most and set(codes) <= {200, 429}, codes)
    return codes


def shared():
    srv = ConfServer(conf, ready_path="/").start()
    try:
        R.check("two workers", H.wait_until(lambda: len(srv.children()) == 2, 5), srv.children())
        codes = burst_on_new_connections(srv, "/a/x.txt", "limit_req zone=addr burst=10")
        first = codes.index(429) if 429 in codes else -1
        R.check("... the first 11 pass, then 429", first == 11 and codes[:11] == [200] * 11, codes)
        st, h = get(srv.port, "/a/x.txt")
        R.check("... a refusal has Retry-After", st == 429 and h.get("retry-after", "").isdigit(), (st, h))
        burst_on_new_connections(srv, "/old/x.txt", "limit_req 1r/s 11 (unnamed zone)")

        # HTTP/2: the streams of one connection, one after the other, counted
        # one by one (python3-h2, through h2_client.py's Client).
        t0 = time.monotonic()
        p = subprocess.run([SYS_PY, "-c", H2_STREAMS, str(srv.port), "1" if H.TLS else "0", "/h2/x.txt", "15"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
        took = time.monotonic() - t0
        try:
            codes = json.loads(p.stdout.decode())
        except ValueError:
            codes = []
        R.check("HTTP/2: 15 streams on one connection answered", len(codes) == 15, (p.stdout, p.stderr))
        R.check("HTTP/2: each stream counted: %d passed in %.1f s (11 to %d)" % (codes.count(200), took, 12 + int(took)),
                11 <= codes.count(200) <= 12 + int(took) and codes[:11] == [200] * 11 and 429 in codes, codes)

        # A header as the key.
        k1 = statuses(srv.port, "/key/x.txt", 5, {"X-Api-Key": "k1"})
        R.check("$http_x_api_key: one value, 3 of 5 over both workers (burst=2), then 429",
                k1 == [200, 200, 200, 429, 429], k1)
        k2 = statuses(srv.port, "/key/x.txt", 3, {"X-Api-Key": "k2"})
        R.check("... another value counts apart", k2 == [200, 200, 200], k2)
        none = statuses(srv.port, "/key/x.txt", 6)
        R.check("... without the header: not limited (nginx: an empty key is not accounted)",
                none == [200] * 6, none)
        empty = statuses(srv.port, "/key/x.txt", 5, {"X-Api-Key": ""})
        R.check("... an empty value: not limited", empty == [200] * 5, empty)

        # A cookie as the key, and this location's status.
        c1 = statuses(srv.port, "/cookie/x.txt", 5, {"Cookie": "theme=dark; session=abc"})
        R.check("$cookie_session: 3 of 5, then the location's limit_req_status 503", c1 == [200, 200, 200, 503, 503], c1)
        st, h = get(srv.port, "/cookie/x.txt", {"Cookie": "session=abc"})
        R.check("... 503 with Retry-After", st == 503 and h.get("retry-after", "").isdigit(), (st, h))
        c2 = statuses(srv.port, "/cookie/x.txt", 3, {"Cookie": "session=xyz"})
        R.check("... another session counts apart", c2 == [200, 200, 200], c2)
        c3 = statuses(srv.port, "/cookie/x.txt", 5, {"Cookie": "theme=dark"})
        R.check("... no such cookie: not limited", c3 == [200] * 5, c3)

        # The site as the key: every client counts in one.
        s1 = [get(srv.port, "/site/x.txt", src="127.0.0.%d" % (40 + i))[0] for i in range(6)]
        R.check("$server_name: 4 of 6 requests from 6 addresses (burst=3), then 429",
                s1 == [200, 200, 200, 200, 429, 429], s1)

        # A full zone: 16 entries, 16 clients hold them; the 17th is refused.
        t = [get(srv.port, "/tiny/x.txt", src="127.0.0.%d" % (2 + i)) for i in range(17)]
        R.check("zone=tiny:512 (16 entries): 16 clients pass", [st for st, _ in t[:16]] == [200] * 16,
                [st for st, _ in t])
        st, h = t[16]
        R.check("... the 17th: 503 with Retry-After (a full zone refuses, evicts no one)",
                st == 503 and h.get("retry-after", "").isdigit(), (st, h))
        st, _ = get(srv.port, "/tiny/x.txt", src="127.0.0.2")
        R.check("... a client that holds an entry still passes", st == 200, st)

        # A full zone keyed by a header: one client fills it with invented
        # values; a new value is still admitted (an entry closest to expiry
        # is evicted), where an address-keyed zone refuses.
        filled = [get(srv.port, "/fill/x.txt", {"X-Fill": "invented-%s" % os.urandom(8).hex()})[0] for _ in range(40)]
        R.check("zone=fill:512 keyed by $http_x_fill: 40 invented values pass", filled == [200] * 40, filled)
        fresh = [get(srv.port, "/fill/x.txt", {"X-Fill": "legit-%d" % i})[0] for i in range(10)]
        R.check("... then 10 new values: all admitted (not 503 for the whole interval)", fresh == [200] * 10, fresh)
        again = statuses(srv.port, "/fill/x.txt", 7, {"X-Fill": "legit-user"})
        R.check("... and a value is still limited as configured (burst=5: 6 of 7, then 429)",
                again == [200] * 6 + [429], again)

        # Reload: the same zones carry over; a resized one starts empty.
        srv.write_conf(conf(srv.port, sessions="128k"))
        log = lambda: open(ERROR_LOG).read() if os.path.exists(ERROR_LOG) else ""
        n = log().count("SIGHUP: ")
        old = set(srv.children())
        os.kill(srv.proc.pid, signal.SIGHUP)
        R.check("reload: done", H.wait_until(lambda: log().count("SIGHUP: ") > n, 10), log()[-500:])
        R.check("reload: a new generation",
                H.wait_until(lambda: len(set(srv.children()) - old) == 2 and not (set(srv.children()) & old), 10),
                (old, srv.children()))
        st, _ = get(srv.port, "/key/x.txt", {"X-Api-Key": "k1"})
        R.check("after the reload: a zone of the same size keeps its counts (k1 still 429)", st == 429, st)
        st, _ = get(srv.port, "/cookie/x.txt", {"Cookie": "session=abc"})
        R.check("... a zone whose size changed starts empty (session abc passes)", st == 200, st)
    finally:
        srv.stop_and_check(R, "exits 0")


def conn_limit():
    srv = ConfServer(lambda port: conf(port, conn="limit_conn_zone $binary_remote_addr zone=perip:1m;\n"
                                                   "limit_conn perip 2;\n"), ready_path="/").start()
    try:
        def held():
            try:
                s = H.connect(srv.port, timeout=2.0)
            except OSError:  # closed at accept: over TLS the handshake fails
                return None
            return s
        socks = [held() for _ in range(6)]
        served = 0
        for s_ in socks:
            if s_ is None:
                continue
            try:
                H.send_get(s_, "/conn/x.txt")
                r = H.Reader(s_).read_response(timeout=2.0)
                served += 1 if r is not None and r.status == 200 else 0
            except OSError:
                pass
        for s_ in socks:
            if s_ is not None:
                s_.close()
        R.check("limit_conn perip 2: %d of 6 connections held at once served (2 over both workers; "
                "each worker alone: up to 4)" % served, served == 2, served)
        # Once closed, the client's count is back: connections are served again.
        def served_again():
            try:
                return get(srv.port, "/conn/x.txt")[0] == 200
            except OSError:  # still counted: closed at accept
                return False
        ok = H.wait_until(served_again, 5)
        R.check("... once they close, served again", ok)
    finally:
        srv.stop_and_check(R, "limit_conn: exits 0")


def cli():
    """`--limit-rate` and `--limit-conn` of `httpz serve` count in the same shared tables."""
    srv = H.Server(ROOT, workers=2, args=["--limit-rate", "1", "--limit-burst", "11", "--limit-conn", "2"],
                   ready_path="/nothing-here").start()
    try:
        # The start probe took one of the burst: 10 left, then one a second.
        t0 = time.monotonic()
        codes = statuses(srv.port, "/a/x.txt", 40)
        took = time.monotonic() - t0
        R.check("--workers 2 --limit-rate 1 --limit-burst 11: %d of 40 new connections passed in %.1f s (10 to %d)"
                % (codes.count(200), took, 11 + int(took)),
                10 <= codes.count(200) <= 11 + int(took) and set(codes) <= {200, 429}, codes)
        def held():
            try:
                return H.connect(srv.port, timeout=2.0)
            except OSError:
                return None
        socks = [held() for _ in range(6)]
        served = 0
        for s_ in socks:
            if s_ is None:
                continue
            try:
                H.send_get(s_, "/nothing-here")
                r = H.Reader(s_).read_response(timeout=2.0)
                served += 1 if r is not None else 0
            except OSError:
                pass
        for s_ in socks:
            if s_ is not None:
                s_.close()
        R.check("--limit-conn 2 with 2 workers: %d of 6 connections held at once answered (2)" % served, served == 2,
                served)
    finally:
        srv.stop_and_check(R, "cli: exits 0")


def shared_mapped(pid):
    """Bytes of the process's shared anonymous mappings (the zones)."""
    n = 0
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            if "/dev/zero (deleted)" in line:
                lo, hi = line.split()[0].split("-")
                n += int(hi, 16) - int(lo, 16)
    return n


def failed_reload():
    """A reload that makes a new 64m zone, then fails (a user file that is a
    directory, read after it): no worker ever sees the zone, so its mapping
    is given back."""
    srv = ConfServer(conf, ready_path="/").start()
    try:
        log = lambda: open(ERROR_LOG).read() if os.path.exists(ERROR_LOG) else ""
        before = shared_mapped(srv.proc.pid)
        bad = (conf(srv.port) + "limit_req_zone $http_x_big zone=big:64m rate=1r/s;\n"
               "location /big/ { limit_req zone=big burst=5; }\n"
               "location /bad/ { auth_basic \"x\"; auth_basic_user_file %s; }\n" % TMP)
        for i in range(3):
            srv.write_conf(bad)
            n = log().count("SIGHUP: ")
            os.kill(srv.proc.pid, signal.SIGHUP)
            R.check("failed reload %d: refused" % (i + 1),
                    H.wait_until(lambda: log().count("SIGHUP: ") > n, 10) and "not a regular file" in log()[-600:],
                    log()[-600:])
        after = shared_mapped(srv.proc.pid)
        R.check("... the supervisor's shared mappings: %d bytes before, %d after 3 failed reloads of a new 64m zone"
                % (before, after), after == before, (before, after))
        st, _ = get(srv.port, "/a/x.txt")
        R.check("... and the server still serves", st == 200, st)
    finally:
        srv.write_conf()
        srv.stop_and_check(R, "failed reload: exits 0")


def check_errors():
    cases = [
        ("limit_req_zone $request_uri zone=a:1m rate=1r/s;\n", "1:16: \"$request_uri\" is not a key"),
        ("limit_req_zone $binary_remote_addr zone=a rate=1r/s;\n", "1:36: \"zone=a\": give zone=NAME:SIZE"),
        ("limit_req_zone $binary_remote_addr zone=a:100 rate=1r/s;\n", "1:36: \"100\": a zone needs at least 512 bytes"),
        ("limit_req_zone $binary_remote_addr zone=a:1m rate=fast;\n", "1:46: \"fast\" is not a rate"),
        ("limit_req_zone $binary_remote_addr zone=a:1m rate=1r/s;\nlimit_req_zone $http_x zone=a:1m rate=1r/s;\n",
         "2:1: the zone a is already given at line 1"),
        ("location /x/ { limit_req zone=nope burst=5; }\n", "1:16: no zone \"nope\""),
        ("limit_req_zone $binary_remote_addr zone=a:1m rate=1r/s;\nlocation /x/ { limit_req zone=a burst=5 delay=2; }\n",
         "2:41: \"delay=2\": 'limit_req zone=NAME' takes burst=N and nodelay"),
        ("limit_req_status 200;\n", "1:18: 200"),
        ("location /x/ { limit_req_zone $binary_remote_addr zone=a:1m rate=1r/s; }\n",
         "1:16: 'limit_req_zone' is not allowed in a location block (only in the top level)"),
        ("limit_conn_zone $http_x zone=c:1m;\n", "1:17: limit_conn counts connections when they are accepted"),
        ("limit_conn perip 2;\n", "1:12: no zone \"perip\""),
    ]
    for text, want in cases:
        path = os.path.join(TMP, "bad.conf")
        with open(path, "w") as f:
            f.write(text + "root %s;\n" % ROOT)
        p = subprocess.run([H.BIN, "check", "--config", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=10)
        err = p.stderr.decode()
        R.check("check: %s" % want, p.returncode == 2 and (path + ":" + want) in err and err.count("\n") == 1,
                (p.returncode, err))


H.part(R, "shared zones", shared, stop_servers=True)
H.part(R, "limit_conn", conn_limit, stop_servers=True)
H.part(R, "serve options", cli, stop_servers=True)
H.part(R, "check", check_errors)
H.part(R, "failed reload", failed_reload, stop_servers=True)
R.finish()
