"""The application layer end to end: examples/app.exe (examples/todo_app.ml:
Route, Respond, Req, Session, Csrf, Sse, Upload, Ws, Middleware, errors as
JSON) on one worker, on 127.0.0.1, in the suite's transport and backend
(HTTPZ_TRANSPORT, HTTPZ_IO), with signed-cookie sessions and again with
in-memory ones; over TLS, its plain HTTP listener beside HTTPS too.

Checked: GET / (and HEAD: no body, same Content-Length); 404; 405 with
Allow; automatic OPTIONS 204 with Allow; the trailing-slash 308 (and none
for //host paths); route parameters with %2F and + (decoded once, + kept);
POST /todos JSON then GET it back, and its Origin check; SSE events parsed
(ids, event names, multi-line data); the login flow with a cookie jar and
the CSRF token (accepted), the cookie's attributes, /me, logout; CSRF
refused without a token, with a wrong one, with a foreign Origin, with
Sec-Fetch-Site: cross-site; a multipart upload stored (curl -F, chunked
too), one over the 10 MiB limit 413 with nothing left behind; assets
served under /assets (and /assets redirected); /slow via the thread pool;
the WebSocket echo (ws:// or wss://); the middleware's request id,
security headers and per-route metrics; errors as JSON.

Run: python3 test/e2e/test_app.py   (needs the examples built by dune build)
The last line is `N passed, N failed`.
"""

import http.cookiejar
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("app")
H.suite_deadline(R, 110)

TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-app-"))
ASSETS = os.path.join(TMP, "assets")
os.mkdir(ASSETS)
UPLOADS = os.path.join(TMP, "uploads")
os.mkdir(UPLOADS)
with open(os.path.join(ASSETS, "site.css"), "wb") as f:
    f.write(b"body { color: teal }\n")
with open(os.path.join(TMP, "secret.txt"), "wb") as f:
    f.write(b"SECRET\n")


def header(headers, name):
    for k, v in headers:
        if k.lower() == name.lower():
            return v
    return None


def req(port, method, path, headers=None, body=b""):
    return H.request(port, method, path, headers=headers, body=body)


def basics(port):
    st, h, body = req(port, "GET", "/")
    R.check("GET / 200 hello", st == 200 and body == b"hello from httpz\n", (st, body))
    st, h2, body = req(port, "HEAD", "/")
    R.check("HEAD / via GET: no body, same Content-Length",
            st == 200 and body == b"" and header(h2, "content-length") == "17", (st, h2, body))
    st, h, body = req(port, "GET", "/nothing/here")
    R.check("404 as JSON (Errors.json)", st == 404 and body == b'{"error":{"status":404,"message":"Not Found"}}\n'
            and header(h, "content-type") == "application/json", (st, body))
    rid = header(h, "x-request-id") or ""
    st, h, _ = req(port, "GET", "/")
    R.check("middleware: a request id per request, security headers",
            len(rid) > 12 and header(h, "x-request-id") not in (None, rid) and header(h, "x-frame-options") == "DENY",
            (rid, h))
    st, h, body = req(port, "DELETE", "/todos/1")
    R.check("405 with Allow", st == 405 and header(h, "allow") == "GET, HEAD, OPTIONS", (st, h))
    st, h, body = req(port, "OPTIONS", "/todos")
    R.check("OPTIONS 204 with Allow", st == 204 and header(h, "allow") == "POST, OPTIONS" and body == b"", (st, h))
    st, h, body = req(port, "OPTIONS", "*")
    R.check("OPTIONS * 204", st == 204 and "GET" in (header(h, "allow") or ""), (st, h))
    st, h, _ = req(port, "GET", "/me/?a=1")
    R.check("trailing slash: 308 to /me, query kept", st == 308 and header(h, "location") == "/me?a=1", (st, h))
    st, h, _ = req(port, "GET", "//me/")
    R.check("no redirect for //host paths", st == 404 and header(h, "location") is None, (st, h))
    st, _, body = req(port, "GET", "/todos/a%2Fb+c%20d")
    R.check("param: %2F stays in the segment, + kept, %20 decoded",
            st == 404 and body == b'{"error":"no such todo","id":"a/b+c d"}', (st, body))
    st, _, body = req(port, "GET", "/todos/%zz")
    R.check("undecodable param: 400", st == 400, (st, body))
    st, _, body = req(port, "GET", "/todos/..")
    R.check("dot segment matches no param: 404", st == 404, (st, body))


def todos(port):
    origin = "%s://127.0.0.1:%d" % (H.SCHEME, port)
    st, h, body = req(port, "POST", "/todos", {"Content-Type": "application/json", "Origin": origin},
                      b'{"title": "buy \\"milk\\""}')
    R.check("POST /todos 201 JSON", st == 201 and header(h, "content-type") == "application/json"
            and re.match(rb'^\{"id":"\d+","title":"buy \\"milk\\""\}$', body), (st, h, body))
    m = re.search(rb'"id":"(\d+)"', body or b"")
    if m:
        st, _, body2 = req(port, "GET", "/todos/" + m.group(1).decode())
        R.check("GET /todos/:id returns it", st == 200 and body2 == body, (st, body2))
    st, _, body = req(port, "POST", "/todos", {"Origin": "https://evil.example"}, b'{"title":"x"}')
    R.check("POST /todos from a foreign Origin: 403", st == 403 and b"another origin" in body, (st, body))
    st, _, body = req(port, "POST", "/todos", {"Content-Type": "application/json"}, b'{"nope":1}')
    R.check("POST /todos without a title: 400", st == 400, (st, body))
    st, _, body = req(port, "POST", "/todos", {}, b'{"title":"x"}')
    R.check("POST /todos without a JSON Content-Type: 415", st == 415, (st, body))
    # curl, a client without Origin, JSON body.
    out = H.curl(["-s", "-o", "-", "-w", "%{http_code}", "-H", "Content-Type: application/json",
                  "--data-binary", '{"title":"from curl"}', H.url(port, "/todos")])
    R.check("curl POST /todos", out.stdout.endswith(b"201") and b'"title":"from curl"' in out.stdout, out.stdout)


def sse(port):
    s = H.connect(port, timeout=5)
    try:
        s.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        r = H.Reader(s).read_response(timeout=5)
    finally:
        s.close()
    R.check("SSE head", r is not None and r.status == 200 and r.header("content-type") == "text/event-stream"
            and r.header("cache-control") == "no-cache", r)
    events = []
    for block in (r.body if r else b"").decode().split("\n\n"):
        ev = {"data": []}
        for line in block.split("\n"):
            if line.startswith(":") or not line:
                continue
            k, _, v = line.partition(":")
            v = v[1:] if v.startswith(" ") else v
            if k == "data":
                ev["data"].append(v)
            else:
                ev[k] = v
        if ev["data"]:
            events.append((ev.get("event"), ev.get("id"), "\n".join(ev["data"])))
    R.check("SSE: three events with ids and multi-line data",
            events == [("tick", str(i), "tick %d\nof 3" % i) for i in (1, 2, 3)], events)


def login_flow(port, label):
    jar = os.path.join(TMP, "jar-" + label)
    base = ["-b", jar, "-c", jar]
    out = H.curl(base + [H.url(port, "/login")])
    m = re.search(rb'name="_csrf" value="([A-Za-z0-9_-]+)"', out.stdout)
    R.check(label + ": GET /login has a CSRF field", m is not None, out.stdout)
    if not m:
        return
    token = m.group(1).decode()
    cookies = open(jar).read()
    R.check(label + ": session cookie set, HttpOnly", "#HttpOnly_127.0.0.1" in cookies and "httpz_session" in cookies, cookies)
    out = H.curl(base + ["-D", "-", "-o", "/dev/null", "--data", "user=ada&password=secret&_csrf=" + token,
                         H.url(port, "/login")])
    heads = H.parse_curl_heads(out.stdout)
    st, h = heads[-1] if heads else (None, {})
    setc = h.get("set-cookie", "")
    R.check(label + ": POST /login with token: 303 to /me", st == 303 and h.get("location") == "/me", out.stdout)
    R.check(label + ": cookie attributes", "HttpOnly" in setc and "SameSite=Lax" in setc and "Path=/" in setc
            and (("Secure" in setc) == H.TLS), setc)
    out = H.curl(base + [H.url(port, "/me")])
    R.check(label + ": /me reads the session", out.stdout == b"you are ada\n", out.stdout)
    # Session.regenerate at login rotated the CSRF token: the page gives a
    # new one, and the pre-login one no longer passes.
    old_token = token
    m = re.search(rb'name="_csrf" value="([A-Za-z0-9_-]+)"', H.curl(base + [H.url(port, "/login")]).stdout)
    token = m.group(1).decode() if m else ""
    R.check(label + ": a new CSRF token after login", m is not None and token != old_token, (old_token, token))
    out = H.curl(base + ["-w", "%{http_code}", "--data", "_csrf=" + old_token, H.url(port, "/logout")])
    R.check(label + ": the pre-login token refused 403", out.stdout.endswith(b"403") and b"invalid CSRF token" in out.stdout, out.stdout)
    # The same session's token, from another origin: refused.
    out = H.curl(base + ["-w", "%{http_code}", "-H", "Origin: https://evil.example", "--data",
                         "_csrf=" + token, H.url(port, "/logout")])
    R.check(label + ": foreign Origin refused 403", out.stdout.endswith(b"403") and b"another origin" in out.stdout, out.stdout)
    out = H.curl(base + ["-w", "%{http_code}", "-H", "Sec-Fetch-Site: cross-site", "--data",
                         "_csrf=" + token, H.url(port, "/logout")])
    R.check(label + ": Sec-Fetch-Site cross-site refused 403", out.stdout.endswith(b"403") and b"cross-site" in out.stdout, out.stdout)
    out = H.curl(base + ["-w", "%{http_code}", "--data", "x=1", H.url(port, "/logout")])
    R.check(label + ": no token refused 403", out.stdout.endswith(b"403") and b"missing CSRF token" in out.stdout, out.stdout)
    out = H.curl(base + ["-w", "%{http_code}", "--data", "_csrf=AAAA" + token[4:], H.url(port, "/logout")])
    R.check(label + ": wrong token refused 403", out.stdout.endswith(b"403") and b"invalid CSRF token" in out.stdout, out.stdout)
    out = H.curl(base + ["-w", "%{http_code}", "-H", "X-CSRF-Token: " + token, "-H",
                         "Origin: %s://127.0.0.1:%d" % (H.SCHEME, port), "-X", "POST", H.url(port, "/logout")])
    R.check(label + ": logout with the header token and same Origin: 303", out.stdout.endswith(b"303"), out.stdout)
    out = H.curl(base + [H.url(port, "/me")])
    R.check(label + ": /me after logout: nobody", out.stdout == b"nobody\n", out.stdout)
    # A tampered cookie is no session.
    st, _, body = req(port, "GET", "/me", {"Cookie": "httpz_session=AAAA.BBBB"})
    R.check(label + ": forged cookie: nobody", st == 401, (st, body))


def curl_login(port, jar):
    """Logs in as ada with a fresh cookie jar; True when /me says so."""
    base = ["-b", jar, "-c", jar]
    out = H.curl(base + [H.url(port, "/login")])
    m = re.search(rb'name="_csrf" value="([A-Za-z0-9_-]+)"', out.stdout)
    if not m:
        return False
    H.curl(base + ["-o", "/dev/null", "--data", "user=ada&password=secret&_csrf=" + m.group(1).decode(),
                   H.url(port, "/login")])
    return H.curl(base + [H.url(port, "/me")]).stdout == b"you are ada\n"


def bounded_sessions(port):
    """--max-sessions 5: anonymous visitors of /login (each gets a session
    for its CSRF token) cannot grow the table; the oldest session goes."""
    jar = os.path.join(TMP, "jar-bounded")
    R.check("bounded: logged in", curl_login(port, jar))
    for i in range(10):
        st, _, _ = req(port, "GET", "/login")
        if st != 200:
            R.check("bounded: anonymous /login %d answered" % i, False, st)
    out = H.curl(["-b", jar, H.url(port, "/me")])
    R.check("bounded: 10 newer sessions pushed the oldest out (5 kept)", out.stdout == b"nobody\n", out.stdout)
    R.check("bounded: a new login still works", curl_login(port, os.path.join(TMP, "jar-bounded-2")))


def upload_and_assets(port):
    big = os.path.join(TMP, "big.bin")
    with open(big, "wb") as f:
        f.write(os.urandom(300000))
    out = H.curl(["-s", "-w", "%{http_code}", "-F", "note=hi", "-F", "f=@" + big + ";filename=../../x.bin",
                  "-F", "g=@" + os.path.join(ASSETS, "site.css"), H.url(port, "/upload")])
    R.check("multipart upload stored: names sanitised, sizes", out.stdout ==
            b'[{"name":"x.bin","bytes":300000},{"name":"site.css","bytes":21}]200', out.stdout)
    stored = sorted(os.listdir(UPLOADS))
    same = any(open(os.path.join(UPLOADS, n), "rb").read() == open(big, "rb").read() for n in stored)
    R.check("the stored file is the one sent, under a generated name", len(stored) == 2 and same, stored)
    out = H.curl(["-s", "-w", "%{http_code}", "-H", "Transfer-Encoding: chunked", "-F",
                  "f=@" + os.path.join(ASSETS, "site.css"), H.url(port, "/upload")])
    R.check("chunked multipart upload stored", out.stdout == b'[{"name":"site.css","bytes":21}]200', out.stdout)
    before = set(os.listdir(UPLOADS))
    with open(big, "wb") as f:
        f.write(b"x" * (11 << 20))
    out = H.curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", "-F", "f=@" + big, H.url(port, "/upload")])
    R.check("upload over the 10 MiB limit: 413", out.stdout == b"413", out.stdout)
    R.check("... nothing left behind", H.wait_until(lambda: set(os.listdir(UPLOADS)) == before, 3),
            sorted(set(os.listdir(UPLOADS)) - before))
    st, _, body = req(port, "POST", "/upload", {"Content-Type": "text/plain"}, b"x")
    R.check("upload that is not multipart: 415", st == 415, (st, body))
    st, h, body = req(port, "GET", "/assets/site.css")
    R.check("assets served", st == 200 and body == b"body { color: teal }\n"
            and (header(h, "content-type") or "").startswith("text/css"), (st, h, body))
    st, h, _ = req(port, "GET", "/assets")
    R.check("/assets redirects to /assets/", st in (301, 308) and header(h, "location") == "/assets/", (st, h))
    st, _, body = req(port, "GET", "/assets/%2e%2e/%2e%2e/secret.txt")
    R.check("assets: %2e%2e does not climb out of the directory", st in (400, 404) and b"SECRET" not in body, (st, body))
    st, _, body = req(port, "GET", "/slow")
    R.check("/slow via offload", st == 200 and body == b"slow done\n", (st, body))
    st, _, body = req(port, "GET", "/metrics")
    R.check("per-route metrics by pattern", st == 200 and b'route="/todos/:id"' in body and b'route="/upload"' in body,
            body[:300])


def websocket(port):
    """The echo at /ws: one masked text frame out, the same text back."""
    s = H.connect(port, timeout=5)
    try:
        s.sendall(b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = s.recv(4096)
            if not chunk:
                break
            head += chunk
        R.check("ws: 101 Switching Protocols", head.startswith(b"HTTP/1.1 101"), head[:200])
        rest = head.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in head else b""
        mask, msg = b"\x01\x02\x03\x04", b"hello ws"
        s.sendall(bytes([0x81, 0x80 | len(msg)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(msg)))
        while len(rest) < 2 + len(msg):
            chunk = s.recv(4096)
            if not chunk:
                break
            rest += chunk
        R.check("ws: the message echoed", rest[:2 + len(msg)] == bytes([0x81, len(msg)]) + msg, rest)
    finally:
        s.close()


def websocket_refusals(port):
    """A refused upgrade is an error answer like the others: JSON here."""
    st, h, body = req(port, "GET", "/ws")
    R.check("ws: not an upgrade: 400 as JSON", st == 400 and header(h, "content-type") == "application/json"
            and body.startswith(b'{"error":{"status":400,'), (st, h, body))
    st, h, body = req(port, "GET", "/ws", {"Upgrade": "websocket", "Connection": "Upgrade",
                                            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
                                            "Sec-WebSocket-Version": "12"})
    R.check("ws: another version: 426 as JSON, Sec-WebSocket-Version: 13 kept",
            st == 426 and header(h, "sec-websocket-version") == "13" and body.startswith(b'{"error":{"status":426,'),
            (st, h, body))


def plain_beside(port):
    """Over TLS, the same app in plain HTTP on --plain-port (no HSTS)."""
    import http.client
    c = http.client.HTTPConnection(H.HOST, port, timeout=5)
    try:
        c.request("GET", "/")
        r = c.getresponse()
        body = r.read()
        R.check("plain HTTP beside HTTPS: the same app", r.status == 200 and body == b"hello from httpz\n", (r.status, body))
        R.check("... without Strict-Transport-Security", r.getheader("strict-transport-security") is None,
                r.getheaders())
    finally:
        c.close()


def run(extra, label):
    plain = H.free_port() if H.TLS else 0
    extra = extra + (["--plain-port", str(plain)] if plain else [])
    app = H.Program([H.example("app"), "-d", ASSETS, "--uploads", UPLOADS] + extra, ready_path="/")
    H.part(R, "start app (%s)" % label, app.start)
    if not app.alive():
        return
    if label == "signed":
        H.part(R, "basics", lambda: basics(app.port))
        H.part(R, "todos", lambda: todos(app.port))
        H.part(R, "sse", lambda: sse(app.port))
        H.part(R, "upload and assets", lambda: upload_and_assets(app.port))
        H.part(R, "websocket", lambda: websocket(app.port))
        H.part(R, "websocket refusals", lambda: websocket_refusals(app.port))
        if plain:
            H.part(R, "plain HTTP beside HTTPS", lambda: plain_beside(plain))
    H.part(R, "login flow (%s)" % label, lambda: login_flow(app.port, label))
    if label == "bounded":
        H.part(R, "bounded memory sessions", lambda: bounded_sessions(app.port))
    app.stop_and_check(R, "app exits 0 on SIGTERM (%s)" % label)


run([], "signed")
run(["--memory-sessions"], "memory")
run(["--memory-sessions", "--max-sessions", "5"], "bounded")
R.finish()
