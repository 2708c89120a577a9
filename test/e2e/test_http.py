"""End-to-end HTTP semantics of `httpz serve` with real clients (curl, http.client).

Run: python3 test/e2e/test_http.py   (needs _build/install/default/bin/httpz)
The last line is `N passed, N failed`.
"""

import email.utils
import gzip
import html.parser
import http.client
import os
import struct
import sys
import tempfile
import time
import urllib.parse
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("http")
H.suite_deadline(R, 55)
H.require_binary(R)

TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-http-"))
DOC = os.path.join(TMP, "root")
os.mkdir(DOC)
MTIME = 1700000000  # a fixed Last-Modified: Tue, 14 Nov 2023 22:13:20 GMT
MAX_AGE = 60


def write(rel, data, mtime=MTIME):
    p = os.path.join(DOC, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data)
    os.utime(p, (mtime, mtime))
    return data


def png_1x1():
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00\xff\x00\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def html_of_size(n, title):
    head = ("<!DOCTYPE html>\n<html><head><title>%s</title></head>\n<body><p>" % title).encode()
    tail = b"</p></body></html>\n"
    return head + b"x" * (n - len(head) - len(tail)) + tail


EMPTY = write("empty.txt", b"")
PAGE = write("index.html", html_of_size(612, "httpz e2e"))
BIG = write("big.bin", os.urandom(1 << 20))
CSS = write("style.css", b"body { color: #333; }\n")
PNG = write("logo.png", png_1x1())
JS = write("app.js", b"console.log('identity');\n" * 40)
JSGZ = write("app.js.gz", gzip.compress(JS, mtime=0))
DIRIDX = write("dir/index.html", b"<!DOCTYPE html><title>dir index</title>\n")
write("noindex/file.txt", b"no index here\n")
assert len(PAGE) == 612

# A directory for --list. Linux file names cannot contain '/', so
# "<script>alert(1)</script>.txt" itself cannot exist; these names carry the
# same payloads (tag injection, attribute break-out, entity) without a slash.
LIST_NAMES = {
    "<script>alert(1)<script>.txt": b"one\n",
    "<img src=x onerror=alert(1)>.txt": b"two\n",
    "\"><b>q'uote.txt": b"three\n",
    "a&b c.txt": b"four\n",
}
for name, data in LIST_NAMES.items():
    write(os.path.join("listdir", name), data)


def conn(port):
    return H.http_client(port)


def get(port, path, headers=None, method="GET", body=None):
    c = conn(port)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data, r
    finally:
        c.close()


def show(status, h, body):
    return "status=%s headers=%r body[%d]=%r" % (status, h, len(body), body[:160])


def main():
    try:
        srv = H.Server(DOC, workers=1, args=["--max-age", str(MAX_AGE)] + H.STATS_ARGS).start()
    except H.ServerError as e:
        R.check("server starts", False, e)
        R.finish()
    port = srv.port
    base = H.url(port, "")

    # --- curl: byte-equal bodies, Date, Server -----------------------------
    for path, data in (("/empty.txt", EMPTY), ("/index.html", PAGE), ("/big.bin", BIG)):
        out = os.path.join(TMP, "curl.out")
        p = H.curl(["-D", "-", "-o", out, base + path])
        heads = H.parse_curl_heads(p.stdout)
        got = open(out, "rb").read() if os.path.exists(out) else b""
        st, h = heads[-1] if heads else (None, {})
        R.check("curl GET %s: 200, body byte-equal (%d bytes)" % (path, len(data)),
                p.returncode == 0 and st == 200 and got == data,
                "rc=%s stderr=%r status=%s got %d bytes (equal=%s) headers=%r"
                % (p.returncode, p.stderr[-300:], st, len(got), got == data, h))
        R.check("curl GET %s: Content-Length %d" % (path, len(data)),
                h.get("content-length") == str(len(data)), h)
        if path == "/index.html":
            date = h.get("date")
            ok = False
            try:
                dt = email.utils.parsedate_to_datetime(date)
                ok = date.endswith(" GMT") and abs(dt.timestamp() - time.time()) < 60
            except Exception:
                pass
            R.check("Date present, IMF-fixdate GMT, within 60 s of now", ok, "Date: %r" % date)
            R.check("Server present", bool(h.get("server")), h)
            R.check("Last-Modified is the file's mtime",
                    h.get("last-modified") == email.utils.formatdate(MTIME, usegmt=True),
                    "Last-Modified: %r, want %r" % (h.get("last-modified"),
                                                     email.utils.formatdate(MTIME, usegmt=True)))
            R.check("ETag present and quoted", (h.get("etag") or "").rstrip().endswith('"'), h)
            R.check("Cache-Control max-age=%d from --max-age" % MAX_AGE,
                    ("max-age=%d" % MAX_AGE) in (h.get("cache-control") or ""), h)
            R.check("Accept-Ranges: bytes", h.get("accept-ranges") == "bytes", h)

    # --- Content-Type ------------------------------------------------------
    for path, want, exact in (("/index.html", "text/html; charset=utf-8", True),
                              ("/style.css", "text/css", False),
                              ("/logo.png", "image/png", True),
                              ("/app.js", ("application/javascript", "text/javascript"), False)):
        st, h, body, _ = get(port, path)
        ct = (h.get("content-type") or "").lower()
        if isinstance(want, tuple):
            ok = any(ct.startswith(w) for w in want)
        elif exact:
            ok = ct.replace(" ", "") == want.replace(" ", "")
        else:
            ok = ct.startswith(want)
        R.check("Content-Type of %s is %s" % (path, want), st == 200 and ok, show(st, h, body))
    st, h, body, _ = get(port, "/logo.png")
    R.check("PNG body byte-equal", body == PNG, show(st, h, body))

    # --- HEAD: same headers, no body (raw socket, read to EOF) --------------
    s = H.connect(port)
    s.sendall(b"HEAD /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    rd = H.Reader(s)
    try:
        r = rd.read_response(head_only=True)
        rest = rd.read_to_eof()
    except Exception as e:
        r, rest = None, repr(e)
    s.close()
    st, gh, _, _ = get(port, "/index.html")
    R.check("HEAD: 200 with Content-Length 612 and no body bytes",
            r is not None and r.status == 200 and r.header("content-length") == "612" and rest == b"",
            "response=%r trailing=%r" % (r, rest))
    if r is not None:
        same = all(r.header(k) == gh.get(k) for k in ("etag", "content-type", "last-modified", "content-length"))
        R.check("HEAD headers equal GET headers (ETag, Content-Type, Last-Modified, Content-Length)",
                same, "HEAD=%r GET=%r" % (r.headers, gh))
    p = H.curl(["-I", base + "/big.bin"])
    heads = H.parse_curl_heads(p.stdout)
    R.check("curl -I: 200, Content-Length 1048576",
            heads and heads[-1][0] == 200 and heads[-1][1].get("content-length") == str(1 << 20),
            p.stdout[:500])

    # --- keep-alive reuse on one http.client connection ---------------------
    c = conn(port)
    try:
        c.request("GET", "/index.html")
        r1 = c.getresponse()
        b1 = r1.read()
        sock1 = c.sock
        name1 = sock1.getsockname() if sock1 else None
        c.request("GET", "/style.css")
        r2 = c.getresponse()
        b2 = r2.read()
        sock2 = c.sock
        name2 = sock2.getsockname() if sock2 else None
        R.check("keep-alive: two requests on one connection, same socket stays open",
                r1.status == 200 and r2.status == 200 and b1 == PAGE and b2 == CSS
                and sock1 is not None and sock1 is sock2 and name1 == name2,
                "statuses %s %s, sockets %r %r, Connection headers %r %r"
                % (r1.status, r2.status, name1, name2, r1.getheader("connection"), r2.getheader("connection")))
        R.check("keep-alive: no Connection: close on HTTP/1.1 responses",
                (r1.getheader("connection") or "").lower() != "close"
                and (r2.getheader("connection") or "").lower() != "close",
                (r1.getheaders(), r2.getheaders()))
    except Exception as e:
        R.check("keep-alive: two requests on one connection", False, repr(e))
    finally:
        c.close()
    # The same through the server's stats: [connections] counts open
    # connections, so while the keep-alive one is open after three requests a
    # stats request (on its own connection) sees exactly 2, and 3 requests more.
    try:
        s0 = srv.stats()
        k = H.connect(port)
        rd = H.Reader(k)
        ok = True
        for path in ("/index.html", "/style.css", "/empty.txt"):
            k.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path).encode())
            rr = rd.read_response()
            ok = ok and rr is not None and rr.status == 200
        s1 = srv.stats()
        k.close()
        R.check("stats JSON has requests, minor_words and connections",
                all(key in s1 for key in ("requests", "minor_words", "connections")), s1)
        R.check("stats: 3 keep-alive requests on one connection that stays open",
                ok and s1.get("connections") == 2 and s1["requests"] - s0["requests"] == 3,
                "responses ok=%s; open connections %s (want 2: the keep-alive one + the stats request), "
                "requests delta %s (want 3); stats %r -> %r"
                % (ok, s1.get("connections"), s1["requests"] - s0["requests"], s0, s1))
    except Exception as e:
        R.check("stats endpoint (--stats) answers JSON", False, repr(e))

    # --- conditional requests ----------------------------------------------
    st, h, _, _ = get(port, "/index.html")
    # Stand-ins when the server sent none: the checks below then fail, not crash.
    etag = h.get("etag") or '"no-etag-in-response"'
    lm = h.get("last-modified") or "Thu, 01 Jan 1970 00:00:00 GMT"
    st, h2, body, _ = get(port, "/index.html", {"If-None-Match": etag})
    R.check("If-None-Match: current ETag -> 304, no body, ETag repeated",
            st == 304 and body == b"" and h2.get("etag") == etag, show(st, h2, body))
    st, h2, body, _ = get(port, "/index.html", {"If-None-Match": '"nope", %s' % etag})
    R.check("If-None-Match: list containing the ETag -> 304", st == 304, show(st, h2, body))
    if etag and not etag.startswith("W/"):
        st, h2, body, _ = get(port, "/index.html", {"If-None-Match": "W/" + etag})
        R.check("If-None-Match: weak comparison (W/ prefix) -> 304", st == 304, show(st, h2, body))
    st, h2, body, _ = get(port, "/index.html", {"If-None-Match": '"other"'})
    R.check("If-None-Match: other ETag -> 200 full body", st == 200 and body == PAGE, show(st, h2, body))
    st, h2, body, _ = get(port, "/index.html", {"If-None-Match": "*"})
    R.check("If-None-Match: * -> 304", st == 304, show(st, h2, body))
    st, h2, body, _ = get(port, "/index.html", {"If-Modified-Since": lm})
    R.check("If-Modified-Since: Last-Modified -> 304, no body", st == 304 and body == b"", show(st, h2, body))
    later = email.utils.formatdate(MTIME + 86400, usegmt=True)
    st, h2, body, _ = get(port, "/index.html", {"If-Modified-Since": later})
    R.check("If-Modified-Since: a later date -> 304", st == 304, show(st, h2, body))
    earlier = email.utils.formatdate(MTIME - 86400, usegmt=True)
    st, h2, body, _ = get(port, "/index.html", {"If-Modified-Since": earlier})
    R.check("If-Modified-Since: an earlier date -> 200", st == 200 and body == PAGE, show(st, h2, body))
    st, h2, body, _ = get(port, "/index.html", {"If-None-Match": '"other"', "If-Modified-Since": lm})
    R.check("If-None-Match takes precedence over If-Modified-Since (RFC 9110 13.2.2) -> 200",
            st == 200 and body == PAGE, show(st, h2, body))
    st, h2, body, _ = get(port, "/index.html", {"If-Modified-Since": "not a date"})
    R.check("If-Modified-Since: invalid date is ignored -> 200", st == 200, show(st, h2, body))

    # --- Range ---------------------------------------------------------------
    n = len(PAGE)
    for rng, lo, hi in (("bytes=0-99", 0, 99), ("bytes=-100", n - 100, n - 1), ("bytes=100-", 100, n - 1),
                        ("bytes=611-611", 611, 611), ("bytes=500-10000", 500, n - 1)):
        st, h2, body, _ = get(port, "/index.html", {"Range": rng})
        want_cr = "bytes %d-%d/%d" % (lo, hi, n)
        R.check("Range %s -> 206, Content-Range %s, exact bytes" % (rng, want_cr),
                st == 206 and h2.get("content-range") == want_cr and body == PAGE[lo:hi + 1]
                and h2.get("content-length") == str(hi - lo + 1), show(st, h2, body))
    st, h2, body, _ = get(port, "/big.bin", {"Range": "bytes=1000000-1048575"})
    R.check("Range on 1 MiB file: 206 with the exact tail bytes",
            st == 206 and body == BIG[1000000:] and h2.get("content-range") == "bytes 1000000-1048575/1048576",
            show(st, h2, body))
    for rng in ("bytes=612-", "bytes=1000-2000"):
        st, h2, body, _ = get(port, "/index.html", {"Range": rng})
        R.check("Range %s (unsatisfiable) -> 416 with Content-Range bytes */612" % rng,
                st == 416 and h2.get("content-range") == "bytes */%d" % n, show(st, h2, body))
    st, h2, body, _ = get(port, "/index.html", {"Range": "bytes=0-99", "If-Range": '"stale-etag"'})
    R.check("If-Range with a stale ETag -> 200 full body", st == 200 and body == PAGE, show(st, h2, body))
    st, h2, body, _ = get(port, "/index.html", {"Range": "bytes=0-99", "If-Range": etag})
    R.check("If-Range with the current ETag -> 206", st == 206 and body == PAGE[:100], show(st, h2, body))

    # --- directories, 404, 405 -----------------------------------------------
    st, h2, body, _ = get(port, "/dir")
    loc = h2.get("location") or ""
    R.check("/dir -> 301 to /dir/", st == 301 and urllib.parse.urlsplit(loc).path == "/dir/",
            show(st, h2, body))
    st, h2, body, _ = get(port, "/dir/")
    R.check("/dir/ serves dir/index.html", st == 200 and body == DIRIDX
            and (h2.get("content-type") or "").startswith("text/html"), show(st, h2, body))
    st, h2, body, _ = get(port, "/")
    R.check("/ serves index.html", st == 200 and body == PAGE, show(st, h2, body))
    st, h2, body, _ = get(port, "/noindex/")
    R.check("directory without index.html and without --list -> 403 or 404",
            st in (403, 404), show(st, h2, body))
    st, h2, body, _ = get(port, "/missing.html")
    R.check("missing file -> 404", st == 404, show(st, h2, body))
    st, h2, body, _ = get(port, "/index.html", method="POST", body=b"hello",
                          headers={"Content-Type": "text/plain"})
    allow = [m.strip().upper() for m in (h2.get("allow") or "").split(",")]
    R.check("POST -> 405 with Allow listing GET and HEAD",
            st == 405 and "GET" in allow and "HEAD" in allow, show(st, h2, body))

    # --- precompressed .gz sidecar ---------------------------------------------
    st, h2, body, _ = get(port, "/app.js", {"Accept-Encoding": "gzip, deflate, br"})
    R.check("Accept-Encoding: gzip -> Content-Encoding: gzip, body equals the .gz bytes",
            st == 200 and (h2.get("content-encoding") or "").lower() == "gzip" and body == JSGZ
            and h2.get("content-length") == str(len(JSGZ)), show(st, h2, body))
    R.check("gzip sidecar: Vary: Accept-Encoding", "accept-encoding" in (h2.get("vary") or "").lower(),
            show(st, h2, body))
    R.check("gzip sidecar: Content-Type of the original (.js), not of .gz",
            "javascript" in (h2.get("content-type") or ""), show(st, h2, body))
    st, h2, body, _ = get(port, "/app.js")
    R.check("no Accept-Encoding -> identity file, no Content-Encoding",
            st == 200 and body == JS and "content-encoding" not in h2, show(st, h2, body))
    st, h2, body, _ = get(port, "/app.js", {"Accept-Encoding": "identity"})
    R.check("Accept-Encoding: identity -> identity file", st == 200 and body == JS
            and "content-encoding" not in h2, show(st, h2, body))

    srv.stop_and_check(R)

    # --- --list: directory listing escapes names, links work ------------------
    try:
        lsrv = H.Server(DOC, workers=1, args=["--list"]).start()
    except H.ServerError as e:
        R.check("server with --list starts", False, e)
        R.finish()
    st, h2, body, _ = get(lsrv.port, "/listdir/")
    text = body.decode("utf-8", "replace")
    R.check("--list: /listdir/ -> 200 text/html", st == 200
            and (h2.get("content-type") or "").startswith("text/html"), show(st, h2, body))
    low = text.lower()
    R.check("--list: no raw <script> from a file name", "<script" not in low, text[:1500])
    R.check("--list: no raw <img from a file name", "<img" not in low, text[:1500])
    R.check("--list: no raw <b> (attribute break-out) from a file name", "<b>" not in low, text[:1500])
    R.check("--list: '<' of names is escaped as an entity",
            any(e in low for e in ("&lt;script&gt;", "&#60;script", "&#x3c;script")), text[:1500])

    class Links(html.parser.HTMLParser):
        def __init__(self):
            super().__init__()
            self.hrefs = []

        def handle_starttag(self, tag, attrs):
            for k, v in attrs:
                if tag == "a" and k == "href" and v is not None:
                    self.hrefs.append(v)

    lp = Links()
    lp.feed(text)
    for name, data in LIST_NAMES.items():
        match = None
        for href in lp.hrefs:
            full = urllib.parse.urljoin("/listdir/", href)
            if urllib.parse.unquote(urllib.parse.urlsplit(full).path) == "/listdir/" + name:
                match = full
        if match is None:
            R.check("--list: a link to %r" % name, False, "hrefs=%r" % lp.hrefs)
            continue
        # What a browser sends: characters not allowed in a target are %-encoded.
        wire = urllib.parse.quote(match, safe="/%:@!$&'()*+,;=-._~")
        st, h3, b3, _ = get(lsrv.port, wire)
        R.check("--list: link to %r resolves (GET %s -> 200, content)" % (name, wire),
                st == 200 and b3 == data, show(st, h3, b3))
    lsrv.stop_and_check(R, "server with --list exits 0 on SIGTERM")


try:
    main()
except Exception as e:  # an unexpected crash of the suite is a failure, not a skip
    import traceback
    R.check("suite ran without an exception", False, traceback.format_exc())
finally:
    R.finish()
