"""The application helpers end to end: test/server/helpers/helpers_server.exe
(Helpers_app: Req.json, Req.negotiate and typed fields, Respond ?headers and
pending headers, Html.escape, the static handler under Route.mount with its
prefix given once) on one worker, in the suite's transport and backend
(HTTPZ_TRANSPORT, HTTPZ_IO), every request over HTTP/1.1 (raw socket) and
over HTTP/2 (curl --http2-prior-knowledge, or --http2 with ALPN over TLS).

Checked: a JSON body accepted (201, Location from ?headers), with a charset
parameter and a +json type; 415 for text/plain and for no Content-Type;
413 over the 1 KiB limit; 400 with the parser's message; Accept
negotiation (JSON, HTML, text, q-values, q=0 refusals, no Accept, 406);
typed request fields; ?headers on text, empty and redirect, and a
Content-Type in ?headers replacing the default; pending headers by string
name, read back; Html.escape in text and attribute; /assets/x.css served
as x.css of the root (not assets/x.css), /assets and directory redirects
keeping the prefix, ../ and its encodings refused; 0 minor words per
request for the typed checks and negotiation (stats, HTTP/1.1).

Run: python3 test/e2e/test_helpers.py   (needs `dune build`)
The last line is `N passed, N failed`.
"""

import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("helpers")
H.suite_deadline(R, 120)

EXE = os.path.join(H.ROOT, "_build", "default", "test", "server", "helpers", "helpers_server.exe")
TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-helpers-"))
ASSETS = os.path.join(TMP, "assets")
for d in (ASSETS, os.path.join(ASSETS, "sub"), os.path.join(ASSETS, "assets")):
    os.mkdir(d)
for path, data in (("x.css", b"body { color: teal }\n"), ("sub/index.html", b"<p>sub</p>\n"),
                   ("assets/x.css", b"WRONG\n")):
    with open(os.path.join(ASSETS, path), "wb") as f:
        f.write(data)
with open(os.path.join(TMP, "secret.txt"), "wb") as f:
    f.write(b"SECRET\n")


class Answer:
    def __init__(self, status, headers, body, version):
        self.status = status
        self.headers = [(k.lower(), v) for k, v in headers]
        self.body = body
        self.version = version

    def header(self, name):
        for k, v in self.headers:
            if k == name:
                return v
        return None

    def all(self, name):
        return [v for k, v in self.headers if k == name]

    def __repr__(self):
        return "<%s %s %r %r>" % (self.version, self.status, self.headers, self.body[:200])


def h1(port, method, path, headers, body):
    st, hs, b = H.request(port, method, path, headers=dict(headers), body=body)
    return Answer(st, hs, b, "1.1")


def h2(port, method, path, headers, body):
    hfile = os.path.join(TMP, "h2.head")
    bfile = os.path.join(TMP, "h2.body")
    args = ["--http2"] if H.TLS else ["--http2-prior-knowledge"]
    args += ["--path-as-is", "-X", method, "-D", hfile, "-o", bfile, "-w", "%{http_version}"]
    names = {k.lower() for k, _ in headers}
    for k, v in headers:
        args += ["-H", "%s: %s" % (k, v)]
    if body or method == "POST":
        bpath = os.path.join(TMP, "h2.req")
        with open(bpath, "wb") as f:
            f.write(body)
        args += ["--data-binary", "@" + bpath]
        if "content-type" not in names:
            args += ["-H", "Content-Type:"]  # curl would add a form type
    out = H.curl(args + [H.url(port, path)])
    if out.returncode != 0:
        return Answer(None, [], out.stderr, out.stdout.decode())
    with open(hfile, "rb") as f:
        raw = f.read()
    with open(bfile, "rb") as f:
        b = f.read()
    # The last head, every field line kept (a dict would hide duplicates).
    blocks = [blk for blk in raw.replace(b"\r\n", b"\n").split(b"\n\n") if blk.startswith(b"HTTP/")]
    if not blocks:
        return Answer(None, [], b, out.stdout.decode())
    lines = blocks[-1].strip(b"\n").split(b"\n")
    hs = []
    for line in lines[1:]:
        if b":" in line:
            k, v = line.split(b":", 1)
            hs.append((k.decode("latin-1").strip(), v.strip().decode("latin-1")))
    return Answer(int(lines[0].split()[1]), hs, b, out.stdout.decode())


def both(port, name, method, path, check, headers=(), body=b""):
    """[check(answer)] over HTTP/1.1 and over HTTP/2."""
    for proto, fn in (("h1", h1), ("h2", h2)):
        a = fn(port, method, path, list(headers), body)
        want_version = "1.1" if proto == "h1" else "2"
        R.check("%s [%s]" % (name, proto), a.version == want_version and check(a), a)


CT_JSON = ("Content-Type", "application/json")


def json_bodies(port):
    both(port, "JSON body: 201, parsed, Location from ?headers", "POST", "/todos",
         lambda a: a.status == 201 and a.body == b'{"id":1,"title":"milk"}'
         and a.header("location") == "/todos/1" and a.header("content-type") == "application/json",
         [CT_JSON], b'{"title":"milk"}')
    both(port, "JSON body with charset=utf-8: 201", "POST", "/todos", lambda a: a.status == 201,
         [("Content-Type", "Application/JSON; charset=utf-8")], b'{"title":"a"}')
    both(port, "JSON body as application/merge-patch+json: 201", "POST", "/todos", lambda a: a.status == 201,
         [("Content-Type", "application/merge-patch+json")], b'{"title":"a"}')
    both(port, "text/plain body: 415 saying JSON", "POST", "/todos",
         lambda a: a.status == 415 and b"JSON" in a.body, [("Content-Type", "text/plain")], b'{"title":"milk"}')
    both(port, "no Content-Type: 415", "POST", "/todos", lambda a: a.status == 415, [], b'{"title":"milk"}')
    big = b'{"title":"' + b"a" * 2000 + b'"}'
    both(port, "2 KB body over the 1 KiB limit: 413", "POST", "/todos", lambda a: a.status == 413, [CT_JSON], big)
    at = b'{"title":"' + b"a" * (1024 - 12) + b'"}'
    both(port, "body of exactly the limit: 201", "POST", "/todos", lambda a: a.status == 201, [CT_JSON], at)
    both(port, "parser error: 400 with its message", "POST", "/todos",
         lambda a: a.status == 400 and b"malformed JSON body: expected" in a.body, [CT_JSON], b'{"name":"x"}')


def negotiation(port):
    def ct(want):
        return lambda a: a.status == 200 and a.header("content-type") == want and a.header("vary") == "Accept"
    both(port, "Accept: application/json", "GET", "/negotiate", ct("application/json"),
         [("Accept", "application/json")])
    both(port, "browser Accept: HTML", "GET", "/negotiate", ct("text/html; charset=utf-8"),
         [("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")])
    both(port, "q-values: text/plain", "GET", "/negotiate", ct("text/plain; charset=utf-8"),
         [("Accept", "application/json;q=0.2, text/plain;q=0.5, text/html;q=0.1")])
    both(port, "*/* with json refused: HTML", "GET", "/negotiate", ct("text/html; charset=utf-8"),
         [("Accept", "*/*, application/json;q=0")])
    both(port, "no Accept: the first offered", "GET", "/negotiate", ct("application/json"))
    both(port, "nothing acceptable: 406", "GET", "/negotiate", lambda a: a.status == 406,
         [("Accept", "image/png")])
    both(port, "accepts: text/* q=0.3 for text/css", "GET", "/accepts?type=text/css",
         lambda a: a.status == 200 and a.body == b"300\n", [("Accept", "text/*;q=0.3, */*;q=0.1")])


def fields_and_headers(port):
    both(port, "typed request fields", "POST", "/fields",
         lambda a: a.status == 200 and a.body == b"user-agent=ua/1\naccept=a/b\nhas-cookie=true\nspan=de\n"
         b"json=false\nform=true\n",
         [("User-Agent", "ua/1"), ("Accept", "a/b"), ("Cookie", "k=v"), ("Accept-Language", "de"),
          ("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")], b"x=1")
    both(port, "?headers on text", "GET", "/with-headers",
         lambda a: a.status == 200 and a.header("cache-control") == "no-store"
         and a.header("content-language") == "en" and a.header("content-type") == "text/plain; charset=utf-8")
    both(port, "?headers on empty (204)", "GET", "/no-content",
         lambda a: a.status == 204 and a.header("etag") == '"v1"' and a.body == b"")
    both(port, "?headers on redirect", "GET", "/moved",
         lambda a: a.status == 303 and a.header("location") == "/fast" and a.header("cache-control") == "no-store")
    both(port, "Content-Type in ?headers replaces the default, once", "GET", "/csv",
         lambda a: a.status == 200 and a.all("content-type") == ["text/csv; charset=utf-8"])
    both(port, "pending headers: string name, read back, written", "GET", "/pending",
         lambda a: a.status == 200 and a.body == b"x-request-id=req-42 cache-control=private vary=-\n"
         and a.header("x-request-id") == "req-42" and a.header("cache-control") == "private")
    both(port, "Html.escape in text and attribute", "GET", "/hello?name=%3Cscript%3E%22x%27%26",
         lambda a: a.status == 200 and a.body ==
         b'<p title="&lt;script&gt;&quot;x&#39;&amp;">Hello, &lt;script&gt;&quot;x&#39;&amp;</p>\n')


def static_mount(port):
    css = b"body { color: teal }\n"
    both(port, "Route.mount once: /assets/x.css is x.css of the root", "GET", "/assets/x.css",
         lambda a: a.status == 200 and a.body == css and (a.header("content-type") or "").startswith("text/css"))
    both(port, "the prefix is not served twice (/assets/assets/x.css)", "GET", "/assets/assets/x.css",
         lambda a: a.status == 200 and a.body == b"WRONG\n")
    both(port, "/assets redirects to /assets/", "GET", "/assets",
         lambda a: a.status == 301 and a.header("location") == "/assets/")
    both(port, "a directory redirect keeps the prefix and the query", "GET", "/assets/sub?q=1",
         lambda a: a.status == 301 and a.header("location") == "/assets/sub/?q=1")
    both(port, "directory index under the mount", "GET", "/assets/sub/",
         lambda a: a.status == 200 and a.body == b"<p>sub</p>\n")
    for p in ("/assets/../secret.txt", "/assets/%2e%2e/secret.txt", "/assets/..%2fsecret.txt",
              "/assets/sub/../../secret.txt", "/assets/%2e%2e%2f%2e%2e%2fsecret.txt"):
        both(port, "escape refused: %s" % p, "GET", p,
             lambda a: a.status in (400, 404) and b"SECRET" not in a.body)
    both(port, "a .. that stays below the mount", "GET", "/assets/sub/../x.css",
         lambda a: a.status == 200 and a.body == css)


def steady_state(srv):
    reqs = (b"GET /fast HTTP/1.1\r\nHost: t\r\nAccept: application/json;q=0.9, text/plain;q=0.5\r\n\r\n"
            b"GET /fast HTTP/1.1\r\nHost: t\r\nAccept: text/*\r\n\r\n"
            b"POST /fast HTTP/1.1\r\nHost: t\r\nContent-Type: application/json; charset=utf-8\r\n"
            b"Content-Length: 2\r\n\r\n{}"
            b"POST /fast HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nab"
            b"GET /fast HTTP/1.1\r\nHost: t\r\n\r\n")
    s = H.connect(srv.port, timeout=10)
    rd = H.Reader(s)

    def run(n):
        for _ in range(n):
            s.sendall(reqs)
            for _ in range(5):
                r = rd.read_response(timeout=10)
                if r is None or r.status not in (200, 204):
                    raise H.ProtocolError("unexpected %r" % (r,))
    try:
        run(200)
        before = srv.stats()
        t0 = time.monotonic()
        run(400)
        after = srv.stats()
        H.check_no_words(R, "typed checks + negotiate + ?headers", before, after, 2000,
                         seconds=time.monotonic() - t0)
    finally:
        s.close()


def main():
    if not R.check("helpers_server.exe built", os.access(EXE, os.X_OK), EXE):
        R.finish()
    srv = H.Program([EXE, "-d", ASSETS] + H.STATS_ARGS, ready_path="/fast")
    H.part(R, "start helpers_server", srv.start)
    if srv.alive():
        H.part(R, "JSON bodies", lambda: json_bodies(srv.port))
        H.part(R, "negotiation", lambda: negotiation(srv.port))
        H.part(R, "fields and headers", lambda: fields_and_headers(srv.port))
        H.part(R, "static mounted once", lambda: static_mount(srv.port))
        H.part(R, "steady state", lambda: steady_state(srv))
        srv.stop_and_check(R, "helpers_server exits 0 on SIGTERM")
    R.finish()


main()
