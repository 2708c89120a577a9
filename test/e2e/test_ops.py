"""What an operator reaches for next (issue 16), against the real server.

1. --listen, repeatable: IPv4 and IPv6 ([::1]:PORT) together with the
   -p/--host shorthand, a host name (localhost), 0.0.0.0 and [::] on one
   port; bad values exit 2 with one line.
2. --header: on 200, 304, 404, 301 and the server's own 400; a default
   (nosniff) replaced; bad names, values and managed fields exit 2.
3. --error-page: the page's bytes with the original status (404, 403,
   405, 416), its own Content-Type; a path leaving the root refused at
   start; the built-in page once the file is gone.
4. --default-type for files without a known extension.
5. --log-format combined and json: fields, escaping, request time.
6. --compress: Accept-Encoding q-values, Vary, an ETag per encoding, 304
   on the compressed tag, HEAD, ranges on the identity form, binary types
   untouched, a sidecar preferred, a changed file recompressed, a file
   above the cache size compressed as well.
7. systemd socket activation: a launcher binds, sets LISTEN_FDS and
   LISTEN_PID and execs httpz with the sockets at fd 3 and 4.
8. Bad values of each option exit 2 with one line naming the problem.
9. The access log tells what the client got (issues 24, 25): a download
   the client drops after 4 MB of 32 MB is logged with the bytes that
   left (between 4 and 32 MB) and marked cut; a whole one complete, with
   its size.

Run: python3 test/e2e/test_ops.py   (needs _build/install/default/bin/httpz)
The last line is `N passed, N failed`.
"""

import gzip
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("ops")
H.suite_deadline(R, 150)
H.require_binary(R)

TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-ops-"))
DOC = os.path.join(TMP, "root")
os.mkdir(DOC)

HTML = b"".join(b"<p>paragraph %04d of a page that compresses well</p>\n" % i for i in range(300))


def write(rel, data):
    p = os.path.join(DOC, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data)


write("index.html", b"<p>index</p>\n")
write("page.html", HTML)
write("app.js", b"function f(x) { return x + 1; }\n" * 100)
write("image.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 4000)
write("pre.css", b"body { color: red }\n" * 100)
write("pre.css.gz", gzip.compress(b"body { color: red }\n" * 100))
write("big.txt", b"big file line\n" * 10000)  # 140 KB: above --cache-max-file 65536
write("README", b"no extension\n")
write("data.weird-ext", b"unknown extension\n")
write("dir/empty.txt", b"")
write("errors/404.html", b"<h1>custom not found</h1>\n")
write("errors/403.txt", b"custom forbidden\n")
write("errors/405.html", b"custom method\n")
write("errors/416.html", b"custom range\n")
write("errors/gone.html", b"soon gone\n")
write(".hidden.html", b"hidden\n")
os.mkdir(os.path.join(DOC, "noindex"))
os.symlink("/etc/hostname", os.path.join(DOC, "outside.html"))


def head(headers, name):
    return dict(headers).get(name.lower())


def refused(args, what, want):
    """`httpz serve ARGS` exits 2 with one line naming the problem."""
    p = subprocess.run([H.BIN, "serve", DOC] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=10)
    err = p.stderr.decode("utf-8", "replace")
    R.check("refused %s: exit 2 and %r (got %d: %s)" % (what, want, p.returncode, err.strip()),
            p.returncode == 2 and want in err and err.count("\n") <= 2, err)


# ---------------------------------------------------------------------------
def listen():
    p1, p2 = H.free_port(), H.free_port()
    srv = H.Server(DOC, args=["--listen", "[::1]:%d" % p1, "--listen", "localhost:%d" % p2]).start()
    for label, host, port in (("-p/--host shorthand", "127.0.0.1", srv.port), ("[::1]", "[::1]", p1),
                              ("localhost", "localhost", p2)):
        out = H.curl(["-g", "-o", "-", "%s://%s:%d/index.html" % (H.SCHEME, host, port)])
        R.check("--listen: %s answers" % label, out.stdout == b"<p>index</p>\n", out)
    start = srv.stderr_text()
    R.check("start line names every address", ("[::1]:%d" % p1) in start and ("127.0.0.1:%d" % p2) in start, start)
    srv.stop_and_check(R)
    # Both families on one port: each socket serves its own.
    p = H.free_port()
    srv = H.Server(DOC, args=["--listen", "0.0.0.0:%d" % p, "--listen", "[::]:%d" % p]).start()
    for host in ("127.0.0.1", "[::1]"):
        out = H.curl(["-g", "-o", "-", "%s://%s:%d/index.html" % (H.SCHEME, host, p)])
        R.check("0.0.0.0 and [::] on one port: %s answers" % host, out.stdout == b"<p>index</p>\n", out)
    srv.stop_and_check(R)


# ---------------------------------------------------------------------------
def headers():
    srv = H.Server(DOC, args=["--header", "X-Frame-Options: DENY", "--header",
                              "Content-Security-Policy:  default-src 'self'",
                              "--header", "x-content-type-options: nosniff-custom"]).start()
    st, h, _ = H.request(srv.port, "GET", "/index.html")
    etag = head(h, "etag")
    cases = [("200", h, st == 200)]
    st, h304, _ = H.request(srv.port, "GET", "/index.html", headers={"If-None-Match": etag})
    cases.append(("304", h304, st == 304))
    st, h404, _ = H.request(srv.port, "GET", "/missing")
    cases.append(("404", h404, st == 404))
    st, h301, _ = H.request(srv.port, "GET", "/noindex")
    cases.append(("301", h301, st == 301))
    s = H.connect(srv.port)
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nBad Name: y\r\n\r\n")
    r = H.Reader(s).read_response(timeout=5)
    s.close()
    cases.append(("server's own 400", r.headers if r else [], r is not None and r.status == 400))
    for label, hh, ok in cases:
        R.check("--header on a %s" % label, ok and head(hh, "x-frame-options") == "DENY"
                and head(hh, "content-security-policy") == "default-src 'self'", hh)
        n = sum(1 for k, _ in hh if k == "x-content-type-options")
        R.check("--header replaces the default nosniff on a %s" % label,
                n == 1 and head(hh, "x-content-type-options") == "nosniff-custom", hh)
    srv.stop_and_check(R)


# ---------------------------------------------------------------------------
def error_pages():
    srv = H.Server(DOC, args=["--error-page", "404=/errors/404.html", "--error-page", "403=errors/403.txt",
                              "--error-page", "405=/errors/405.html", "--error-page", "416=/errors/416.html",
                              "--error-page", "400=/errors/gone.html"]).start()
    st, h, b = H.request(srv.port, "GET", "/no/such/file")
    R.check("404 custom page with status 404", st == 404 and b == b"<h1>custom not found</h1>\n"
            and head(h, "content-type") == "text/html; charset=utf-8", (st, h, b))
    st, h, b = H.request(srv.port, "HEAD", "/no/such/file")
    R.check("HEAD of a 404: no body, the page's length", st == 404 and b == b""
            and head(h, "content-length") == "26", (st, h, b))
    st, h, b = H.request(srv.port, "GET", "/noindex/")
    R.check("403 custom page (directory without index)", st == 403 and b == b"custom forbidden\n"
            and head(h, "content-type") == "text/plain; charset=utf-8", (st, h, b))
    st, h, b = H.request(srv.port, "DELETE", "/index.html")
    R.check("405 custom page keeps Allow", st == 405 and b == b"custom method\n"
            and head(h, "allow") == "GET, HEAD, OPTIONS", (st, h, b))
    st, h, b = H.request(srv.port, "GET", "/index.html", headers={"Range": "bytes=1000-"})
    R.check("416 custom page keeps Content-Range", st == 416 and b == b"custom range\n"
            and head(h, "content-range") == "bytes */13", (st, h, b))
    st, h, b = H.request(srv.port, "GET", "/outside.html")
    R.check("a symlink out of the root is still 404 (custom page)", st == 404
            and b == b"<h1>custom not found</h1>\n", (st, b))
    os.unlink(os.path.join(DOC, "errors/gone.html"))
    time.sleep(1.2)  # past the cache's re-check interval
    st, h, b = H.request(srv.port, "GET", "/%zz")
    R.check("page gone: the built-in 400", st == 400 and b"400 Bad Request" in b, (st, b))
    srv.stop_and_check(R)


# ---------------------------------------------------------------------------
def default_type():
    srv = H.Server(DOC).start()
    st, h, _ = H.request(srv.port, "GET", "/README")
    R.check("no extension: application/octet-stream by default", head(h, "content-type") == "application/octet-stream", h)
    srv.stop_and_check(R)
    srv = H.Server(DOC, args=["--default-type", "text/plain; charset=utf-8"]).start()
    for path in ("/README", "/data.weird-ext"):
        st, h, _ = H.request(srv.port, "GET", path)
        R.check("--default-type for %s" % path, st == 200 and head(h, "content-type") == "text/plain; charset=utf-8", h)
    st, h, _ = H.request(srv.port, "GET", "/index.html")
    R.check("--default-type leaves known types", head(h, "content-type") == "text/html; charset=utf-8", h)
    srv.stop_and_check(R)


# ---------------------------------------------------------------------------
def log_formats():
    for fmt in ("combined", "json"):
        path = os.path.join(TMP, "ops-%s.log" % fmt)
        srv = H.Server(DOC, args=["--access-log", path, "--log-format", fmt]).start()
        H.request(srv.port, "GET", "/index.html?a=\"b\"",
                  headers={"Referer": "http://r.example/\\x", "User-Agent": "agent \"007\""})
        H.request(srv.port, "GET", "/missing")
        srv.stop_and_check(R)
        with open(path, "rb") as f:
            lines = [l for l in f.read().splitlines() if b"/index.html?" in l or b"/missing" in l]
        R.check("%s: two lines" % fmt, len(lines) == 2, lines)
        if len(lines) != 2:
            continue
        if fmt == "combined":
            m = re.match(rb'^127\.0\.0\.1 - - \[\d\d/\w\w\w/\d{4}:\d\d:\d\d:\d\d \+0000\] '
                         rb'"GET /index.html\?a=\\x22b\\x22 HTTP/1.1" 200 13 '
                         rb'"http://r.example/\\x5Cx" "agent \\x22007\\x22" (\d+)$', lines[0])
            R.check("combined: fields, nginx escaping, request time last", m, lines[0])
            R.check("combined: absent Referer and User-Agent are \"-\"",
                    re.search(rb'" 404 \d+ "-" "-" \d+$', lines[1]), lines[1])
        else:
            try:
                o = [json.loads(l) for l in lines]
            except ValueError as e:
                o = None
                R.check("json: lines parse", False, (e, lines))
            if o:
                a = o[0]
                R.check("json: fields", a["remote_addr"] == "127.0.0.1" and a["request"] == 'GET /index.html?a="b" HTTP/1.1'
                        and a["status"] == 200 and a["body_bytes_sent"] == 13
                        and a["referer"] == "http://r.example/\\x" and a["user_agent"] == 'agent "007"'
                        and isinstance(a["request_time_us"], int) and 0 <= a["request_time_us"] < 5_000_000
                        and re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", a["time"]), a)
                R.check("json: absent fields are null", o[1]["referer"] is None and o[1]["user_agent"] is None
                        and o[1]["status"] == 404, o[1])


# ---------------------------------------------------------------------------
BIG = 32 * 1024 * 1024


def truthful_log():
    big = os.path.join(DOC, "big.bin")
    with open(big, "wb") as f:
        f.truncate(BIG)  # sparse: its bytes do not matter
    try:
        for fmt in ("json", "common"):
            path = os.path.join(TMP, "ops-truthful-%s.log" % fmt)
            srv = H.Server(DOC, args=["--access-log", path, "--log-format", fmt]).start()
            s = H.connect(srv.port, timeout=10, rcvbuf=65536)
            got = 0
            try:
                s.sendall(b"GET /big.bin?cut HTTP/1.1\r\nHost: t\r\n\r\n")
                while got < 4 * 1024 * 1024:
                    n = len(s.recv(65536))
                    if n == 0:
                        break
                    got += n
            finally:
                s.close()  # unread bytes: the kernel resets the connection
            R.check("%s: the client read 4 MB" % fmt, got >= 4 * 1024 * 1024, got)
            # Counted, not parsed: the harness's reader is slow over TLS.
            s = H.connect(srv.port, timeout=30)
            data = b""
            total = 0
            try:
                s.sendall(b"GET /big.bin?whole HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
                while True:
                    chunk = s.recv(1 << 20)
                    if not chunk:
                        break
                    if len(data) < 4096:
                        data += chunk[:4096]
                    total += len(chunk)
            finally:
                s.close()
            head = data.find(b"\r\n\r\n") + 4
            R.check("%s: a whole download" % fmt, data.startswith(b"HTTP/1.1 200 ") and total - head == BIG,
                    (data[:80], total - head))
            time.sleep(0.3)
            srv.stop_and_check(R)
            with open(path, "rb") as f:
                lines = f.read().splitlines()
            cut = [l for l in lines if b"/big.bin?cut" in l]
            whole = [l for l in lines if b"/big.bin?whole" in l]
            R.check("%s: each logged once" % fmt, len(cut) == 1 and len(whole) == 1, lines)
            if len(cut) != 1 or len(whole) != 1:
                continue
            if fmt == "json":
                c, w = json.loads(cut[0]), json.loads(whole[0])
                R.check("json: the cut one: 200, the bytes that left, complete false",
                        c["status"] == 200 and 4 * 1024 * 1024 <= c["body_bytes_sent"] < BIG
                        and c["complete"] is False, c)
                R.check("json: the whole one: its size, complete true",
                        w["status"] == 200 and w["body_bytes_sent"] == BIG and w["complete"] is True, w)
            else:
                m = re.search(rb'" 200 (\d+) \d+ cut$', cut[0])
                R.check("common: the cut one marked cut, with the bytes that left",
                        m and 4 * 1024 * 1024 <= int(m.group(1)) < BIG, cut[0])
                R.check("common: the whole one: its size, no mark",
                        re.search(rb'" 200 %d \d+$' % BIG, whole[0]), whole[0])
    finally:
        os.remove(big)


# ---------------------------------------------------------------------------
def compress():
    srv = H.Server(DOC, args=["--compress"]).start()
    port = srv.port

    def get(path, ae=None, extra=None, method="GET"):
        h = {} if ae is None else {"Accept-Encoding": ae}
        h.update(extra or {})
        st, hh, b = H.request(port, method, path, headers=h)
        return st, dict(hh), b

    st, plain, b = get("/page.html")
    R.check("no Accept-Encoding: identity, Vary", st == 200 and b == HTML and "content-encoding" not in plain
            and plain.get("vary") == "Accept-Encoding", plain)
    st, gz, b = get("/page.html", "gzip")
    R.check("gzip accepted: gzip body that decodes to the file", st == 200 and plain.get("vary") == "Accept-Encoding"
            and gz.get("content-encoding") == "gzip" and gzip.decompress(b) == HTML
            and int(gz["content-length"]) == len(b) < len(HTML) // 4, (gz, len(b)))
    R.check("an ETag per encoding", gz.get("etag") and plain.get("etag") and gz["etag"] != plain["etag"]
            and gz["etag"].startswith(plain["etag"][:-1]), (plain.get("etag"), gz.get("etag")))
    for ae, want in (("gzip;q=0", None), ("br", None), ("*", "gzip"), ("br, gzip;q=0.5", "gzip"),
                     ("gzip;q=0, *;q=1", None), ("x-gzip", "gzip"), ("identity", None)):
        st, hh, b = get("/page.html", ae)
        R.check("Accept-Encoding: %s -> %s" % (ae, want or "identity"), st == 200
                and hh.get("content-encoding") == want
                and (b == HTML if want is None else gzip.decompress(b) == HTML), hh)
    st, hh, b = get("/page.html", "gzip", {"If-None-Match": gz.get("etag", "")})
    R.check("304 on the compressed tag", st == 304 and hh.get("etag") == gz.get("etag")
            and hh.get("vary") == "Accept-Encoding", (st, hh))
    st, hh, b = get("/page.html", "gzip", {"If-None-Match": plain.get("etag", "")})
    R.check("the identity tag does not match the gzip answer", st == 200 and hh.get("content-encoding") == "gzip", (st, hh))
    st, hh, b = get("/page.html", "gzip", method="HEAD")
    R.check("HEAD: the gzip answer's length, no body", st == 200 and hh.get("content-encoding") == "gzip"
            and hh.get("content-length") == gz.get("content-length") and b == b"", hh)
    st, hh, b = get("/page.html", "gzip", {"Range": "bytes=0-9"})
    R.check("a range is answered on the identity form", st == 206 and b == HTML[:10]
            and "content-encoding" not in hh and hh.get("etag") == plain.get("etag"), (st, hh, b))
    st, hh, b = get("/app.js", "gzip")
    R.check("JavaScript is compressed", hh.get("content-encoding") == "gzip" and gzip.decompress(b).startswith(b"function"), hh)
    st, hh, b = get("/image.png", "gzip")
    R.check("a PNG is never compressed, nor Vary", "content-encoding" not in hh and "vary" not in hh and len(b) == 4008, hh)
    st, hh, b = get("/pre.css", "gzip")
    R.check("a sidecar is preferred (its own -gz tag)", hh.get("content-encoding") == "gzip"
            and hh.get("etag", "").endswith('-gz"'), hh)
    st, hh, b = get("/big.txt", "gzip")
    R.check("a file above the cache size is compressed too (issue 25)", st == 200
            and hh.get("content-encoding") == "gzip" and gzip.decompress(b) == b"big file line\n" * 10000
            and hh.get("etag", "").endswith('-z6"'), hh)
    st, hh, b = get("/big.txt", "identity")
    R.check("... and sent as it is to a client that does not take gzip", st == 200
            and "content-encoding" not in hh and len(b) == 140000, hh)
    st, hh, b = get("/index.html", "gzip")
    R.check("a file under 256 bytes is sent as it is", st == 200 and "content-encoding" not in hh, hh)
    # A changed file: the next check (within a second) sees the new version.
    write("page.html", HTML.replace(b"paragraph", b"PARAGRAPH"))
    time.sleep(1.2)
    st, hh, b = get("/page.html", "gzip")
    R.check("a changed file is compressed again", hh.get("content-encoding") == "gzip"
            and gzip.decompress(b) == HTML.replace(b"paragraph", b"PARAGRAPH") and hh.get("etag") != gz.get("etag"), hh)
    write("page.html", HTML)
    curl = H.curl(["--compressed", "-o", "-", "-D", "-", H.url(port, "/app.js")])
    R.check("curl --compressed decodes it", b"function f(x)" in curl.stdout and b"content-encoding: gzip" in curl.stdout.lower(),
            curl.stdout[:400])
    srv.stop_and_check(R)
    srv = H.Server(DOC).start()
    st, hh, b = H.request(srv.port, "GET", "/page.html", headers={"Accept-Encoding": "gzip"})
    R.check("off by default", st == 200 and "content-encoding" not in dict(hh) and b == HTML, hh)
    srv.stop_and_check(R)


# Bad values: exit 2 with one line naming the problem (usage_error).
REFUSED = [
    (["--listen", "::1:80"], "IPv6 without brackets", "an IPv6 address goes in brackets"),
    (["--listen", "[::1]:70000"], "port out of range", "out of range"),
    (["--listen", "127.0.0.1"], "no port", "give ADDR:PORT"),
    (["--listen", "[1.2.3.4]:80"], "IPv4 in brackets", "is not an IPv6 address"),
    (["--header", "X-A"], "a header without colon", "give 'Name: value'"),
    (["--header", "Bad Name: x"], "a name with a space", "must be a token"),
    (["--header", "X-A: a\rb"], "a value with CR", "must not hold CR, LF or NUL"),
    (["--header", "Content-Length: 5"], "a framing field", "written by the server itself"),
    (["--header", "Cache-Control: no-store", "--max-age", "60"], "Cache-Control with --max-age", "give one"),
    (["--error-page", "404=../etc/passwd"], "a page outside the root", "cannot be opened beneath the root"),
    (["--error-page", "404=/outside.html"], "a page through a symlink out of the root", "cannot be opened beneath the root"),
    (["--error-page", "404=/noindex"], "a directory", "is not a regular file"),
    (["--error-page", "418=/errors/404.html"], "a status the handler never sends", "never answers 418"),
    (["--error-page", "404"], "no path", "give CODE=PATH"),
    (["--error-page", "404=/errors/404.html", "--error-page", "404=/index.html"], "a code twice", "given twice"),
    (["--default-type", "plain"], "a type without subtype", "not a media type"),
    (["--default-type", "text/plain\nX: y"], "a type with LF", "not a media type"),
    (["--compress-level", "10"], "a compression level of 10", "between 1 and 9"),
    (["--access-log", "-", "--log-format", "xml"], "an unknown log format", "give common, combined, vhost_combined or json"),
    (["--log-format", "json"], "a log format without a log", "needs --access-log"),
    (["--error-page", "404=/.hidden.html"], "a page among the dotfiles", "is a dotfile"),
]


def bad_values():
    for args, what, want in REFUSED:
        refused(args, what, want)


# ---------------------------------------------------------------------------
LAUNCHER = r'''
import os, socket, sys
socks = []
for family, addr in ((socket.AF_INET, ("127.0.0.1", 0)), (socket.AF_INET6, ("::1", 0))):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(addr)
    s.listen(128)
    socks.append(s)
with open(sys.argv[1], "w") as f:
    f.write(" ".join(str(s.getsockname()[1]) for s in socks))
# As systemd does: the sockets at fd 3, 4, LISTEN_PID = the pid exec keeps.
# Copies first: a socket may already sit at 3 or 4.
copies = [os.dup(s.fileno()) for s in socks]
for i, fd in enumerate(copies):
    os.dup2(fd, 3 + i, inheritable=True)
os.environ["LISTEN_FDS"] = str(len(socks))
os.environ["LISTEN_PID"] = str(os.getpid())
os.execv(sys.argv[2], sys.argv[2:])
'''


class Activated(H.Server):
    """`httpz serve` started through the launcher: no -p, no --host."""

    def __init__(self, extra=()):
        super().__init__(DOC, ready_path="/index.html")
        self.extra = list(extra)
        self.ports_file = os.path.join(TMP, "ports-%d" % id(self))
        self.launcher = os.path.join(TMP, "launcher.py")
        with open(self.launcher, "w") as f:
            f.write(LAUNCHER)

    @property
    def argv(self):
        return [sys.executable, self.launcher, self.ports_file, self.binary, "serve", "-d", DOC,
                "--workers", "2"] + H.transport_args() + self.extra

    def start(self, timeout=10.0):
        err = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=err, stderr=err,
                                     start_new_session=True)
        err.close()
        H._servers.append(self)
        H.wait_until(lambda: os.path.exists(self.ports_file) and os.path.getsize(self.ports_file) > 0, 5)
        with open(self.ports_file) as f:
            self.port, self.port6 = (int(x) for x in f.read().split())
        return self


def socket_activation():
    srv = Activated().start()
    ok = H.wait_until(lambda: H.request(srv.port, "GET", "/index.html", timeout=1)[0] == 200, 10)
    R.check("socket activation: the IPv4 socket at fd 3 answers", ok, srv.stderr_text())
    out = H.curl(["-g", "-o", "-", "%s://[::1]:%d/index.html" % (H.SCHEME, srv.port6)])
    R.check("socket activation: the IPv6 socket at fd 4 answers", out.stdout == b"<p>index</p>\n", out)
    err = srv.stderr_text()
    R.check("start line names the inherited addresses", ("127.0.0.1:%d" % srv.port) in err
            and ("[::1]:%d" % srv.port6) in err, err)
    pids = srv.children()
    R.check("both workers serve the inherited sockets", len(pids) == 2, pids)
    srv.stop_and_check(R)
    srv = Activated(["-p", "8080"]).start()
    srv.proc.wait(timeout=10)
    err = srv.stderr_text()
    R.check("socket activation with -p: exit 2, one line", srv.proc.returncode == 2
            and "cannot be used with the 2 socket(s) systemd passed" in err, (srv.proc.returncode, err))


H.part(R, "--listen", listen, stop_servers=True)
H.part(R, "--header", headers, stop_servers=True)
H.part(R, "--error-page", error_pages, stop_servers=True)
H.part(R, "--default-type", default_type, stop_servers=True)
H.part(R, "--log-format", log_formats, stop_servers=True)
H.part(R, "--compress", compress, stop_servers=True)
H.part(R, "socket activation", socket_activation, stop_servers=True)
H.part(R, "bad option values", bad_values)
H.part(R, "truthful access log", truthful_log, stop_servers=True)
R.finish()
