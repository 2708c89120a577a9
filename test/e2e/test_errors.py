"""Error answers shaped by the application (Errors, issue 38): the test
server test/server/errors/errors_server.exe, one error source per route, in the
suite's transport and backend (HTTPZ_TRANSPORT, HTTPZ_IO), over HTTP/1.1
(raw sockets) and HTTP/2 (curl; Python's h2 for a body that stalls).

With Server.config.errors = Errors.json and a Route.not_found: 404 (no
route: the custom not-found), 405 (Allow kept), 400 (malformed path
parameter), 413 (read_body's limit, max_body), 408 (a body that stops
coming), 500 (a handler that raises, one that returns without
answering), 503 (the handler timeout, the offload queue full: Retry-After
kept), 403 and 401 (Guard: WWW-Authenticate, no-store kept), the static
handler's 404 (HEAD: no body), Respond.error_reason (the reason escaped
as JSON) all come back as the app's JSON with the right status and
content type; OPTIONS stays 204, the slash redirect 308, a request that
does not parse gets the fixed text 400. A renderer that raises: the
built-in text answer, the worker alive. A renderer that answers
through Respond.error_reason gets the text answer inside (no recursion).
With the renderer set, answered requests (a route, a static file) stay at
0 minor words each.
A router's own renderer (Route.compile ~errors) renders its 404/405 only. Nothing set: the
answers as they always were; and a streamed body that came whole with its
head is held to read_body's limit (413; it was 200).

Run: python3 test/e2e/test_errors.py   (needs `dune build` first)
The last line is `N passed, N failed`.
"""

import json
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("errors")
H.suite_deadline(R, 150)

HERE = os.path.dirname(os.path.abspath(__file__))
EXE = os.path.join(H.ROOT, "_build", "default", "test", "server", "errors", "errors_server.exe")
SYS_PY = "/usr/bin/python3"  # Debian's python3-h2 lives there

TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-errors-"))
ASSETS = os.path.join(TMP, "assets")
H.write_file(ASSETS, "a.txt", b"asset\n")
USERS = os.path.join(TMP, "users")
# admin / secret (examples/admin.htpasswd)
with open(USERS, "w") as f:
    f.write("admin:$6$abcdefgh$ltjgWl6579NluT/Vi1nwEvcil.G5Nbc4NiXZaNGStk8PSwGfQv72N2CKPPrVACtLtip/"
            "cZ/1GM/O6IND4WQhG.\n")


def server(mode):
    return H.Program([EXE, "-d", ASSETS, "--users", USERS, "--errors", mode] + H.STATS_ARGS).start()


def header(headers, name):
    for k, v in headers:
        if k.lower() == name.lower():
            return v
    return None


def req(port, method, path, headers=None, body=b""):
    return H.request(port, method, path, headers=headers, body=body)


def is_json_error(body, status, message=None):
    try:
        d = json.loads(body.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return False
    e = d.get("error") if isinstance(d, dict) else None
    return (isinstance(e, dict) and e.get("status") == status
            and (message is None or e.get("message") == message))


def check_json(label, r, status, message=None, **fields):
    st, h, body = r
    ok = (st == status and (header(h, "content-type") or "").startswith("application/json")
          and is_json_error(body, status, message))
    for name, want in fields.items():
        ok = ok and header(h, name.replace("_", "-")) == want
    R.check("%s: %d as the app's JSON%s" % (label, status, "".join(", %s kept" % n for n in fields)), ok,
            (st, h, body[:300]))


# {1 HTTP/2 through curl}

def curl2(port, method, path, data=None, extra=()):
    """One HTTP/2 request with curl: (status, [(name, value)], body), or
    (None, stderr) when curl failed."""
    proto = ["--http2"] if H.TLS else ["--http2-prior-knowledge"]
    args = proto + ["-i", "-X", method, H.url(port, path)] + list(extra)
    if method == "HEAD":
        args = proto + ["-I", H.url(port, path)] + list(extra)
    if data is not None:
        args += ["--data-binary", "@-"]
    tls = ["--cacert", H.tls_files()[0]] if H.TLS else []
    p = subprocess.run(["curl", "-sS", "--noproxy", "*", "--max-time", "10"] + tls + args, input=data or b"",
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=H.CLIENT_ENV, timeout=20)
    out = p.stdout
    head, _, body = out.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    if not lines or not lines[0].startswith(b"HTTP/2"):
        return None, [], p.stderr
    status = int(lines[0].split()[1])
    hs = []
    for l in lines[1:]:
        k, _, v = l.partition(b":")
        hs.append((k.decode("latin-1").strip(), v.decode("latin-1").strip()))
    return status, hs, body


H2_STALL = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import h2_client
c = h2_client.Client(int(sys.argv[2]), sys.argv[3] == "1")
sid = c.conn.get_next_available_stream_id()
c.conn.send_headers(sid, [(":method", "POST"), (":scheme", "https"), (":authority", "localhost"),
                          (":path", "/whole"), ("content-length", "500")], end_stream=False)
c.conn.send_data(sid, b"x" * 10)
c.flush()
t0 = time.monotonic()
c.pump(lambda: sid in c.ended or sid in c.reset, timeout=8.0)
print(json.dumps({"head": c.heads.get(sid), "body": c.bodies.get(sid, b"").decode("latin-1"),
                  "reset": c.reset.get(sid), "seconds": time.monotonic() - t0}))
"""


def h2_stall(port):
    p = subprocess.run([SYS_PY, "-c", H2_STALL, HERE, str(port), "1" if H.TLS else "0"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20)
    try:
        return json.loads(p.stdout.decode())
    except ValueError:
        return {"error": p.stderr.decode()[-800:]}


# {1 The parts}

def json_mode():
    srv = server("json")
    port = srv.port
    st, h, body = req(port, "GET", "/")
    R.check("GET / 200", st == 200 and body == b"ok\n", (st, body))

    # The custom not-found answers what no route matches...
    st, h, body = req(port, "GET", "/no/such/route")
    R.check("404 (no route): the custom not-found's body",
            st == 404 and body == b'{"error":"custom not found"}\n'
            and header(h, "content-type") == "application/json", (st, h, body))
    # ...while the router's automatic answers stay the router's.
    check_json("405 (POST on a GET route)", req(port, "POST", "/only-get"), 405, "Method Not Allowed",
               allow="GET, HEAD, OPTIONS")
    st, h, body = req(port, "OPTIONS", "/only-get")
    R.check("OPTIONS still 204 with Allow", st == 204 and header(h, "allow") == "GET, HEAD, OPTIONS"
            and body == b"", (st, h, body))
    st, h, body = req(port, "GET", "/dir?q=1")
    R.check("slash redirect still 308", st == 308 and header(h, "location") == "/dir/?q=1", (st, h))
    check_json("400 (a path parameter that does not decode)", req(port, "GET", "/items/%zz"), 400,
               "malformed path parameter")
    st, h, body = req(port, "GET", "/items/7")
    R.check("a parameter that decodes: 200", st == 200 and body == b"7\n", (st, body))

    # Respond.error / error_reason: the reason escaped as JSON.
    check_json("Respond.error_reason", req(port, "GET", "/reason"), 409,
               'a "quoted" <b>reason</b> \\ \x01 caf\u00e9')
    check_json("Respond.error", req(port, "GET", "/teapot"), 406, "Not Acceptable")

    # Bodies: the limits the server enforces.
    check_json("413 (read_body limit, body with the head)", req(port, "POST", "/stream", body=b"y" * 500), 413,
               "Content Too Large")
    check_json("413 (read_body limit, body after the head)", req(port, "POST", "/stream", body=b"y" * 200000), 413)
    check_json("413 (max_body, body read whole)", req(port, "POST", "/whole", body=b"y" * 300000), 413)
    st, h, body = req(port, "POST", "/whole", body=b"z" * 100)
    R.check("a body within the limits is read", st == 200 and body == b"100\n", (st, body))

    # 408: the head and 10 bytes of a 500-byte body, then nothing.
    s = H.connect(port, timeout=8)
    try:
        s.sendall(b"POST /whole HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n" + b"x" * 10)
        t0 = time.monotonic()
        r = H.Reader(s).read_response(timeout=8)
        st, h, body = (r.status, r.headers, r.body) if r else (None, [], b"")
        check_json("408 (the body stopped coming)", (st, h, body), 408, "Request Timeout")
        R.check("408 within a few seconds of the 1 s body timeout", time.monotonic() - t0 < 6, time.monotonic() - t0)
    finally:
        s.close()

    # Failed handlers.
    check_json("500 (the handler raised)", req(port, "GET", "/raise"), 500, "Internal Server Error")
    check_json("500 (the handler returned without answering)", req(port, "GET", "/silent"), 500)
    check_json("503 (the handler timeout)", req(port, "GET", "/hang"), 503)

    # Offload: one thread, a queue of one; the third concurrent job is refused.
    results = []

    def slow():
        results.append(req(port, "GET", "/slow"))

    ts = [threading.Thread(target=slow) for _ in range(2)]
    for t in ts:
        t.start()
        time.sleep(0.2)
    third = req(port, "GET", "/slow")
    for t in ts:
        t.join()
    check_json("503 (offload queue full)", third, 503, retry_after="1")
    R.check("the two queued offloads answered", sorted(r[0] for r in results) == [200, 200],
            [r[:1] for r in results])

    # Guards.
    check_json("403 (guard denies the address)", req(port, "GET", "/forbidden"), 403, "Forbidden",
               cache_control="no-store")
    check_json("401 (no credentials)", req(port, "GET", "/auth"), 401, "Unauthorized",
               www_authenticate='Basic realm="errors test", charset="UTF-8"')
    st, h, body = req(port, "GET", "/auth", headers={"Authorization": "Basic YWRtaW46c2VjcmV0"})
    R.check("401 route with the password: 200", st == 200 and body == b"in\n", (st, body))

    # Static.
    st, h, body = req(port, "GET", "/assets/a.txt")
    R.check("static file served", st == 200 and body == b"asset\n", (st, body))
    check_json("static 404", req(port, "GET", "/assets/missing.txt"), 404, "Not Found")
    check_json("static 405", req(port, "DELETE", "/assets/a.txt"), 405, allow="GET, HEAD, OPTIONS")
    st, h, body = req(port, "HEAD", "/assets/missing.txt")
    R.check("static 404 to HEAD: JSON headers, no body",
            st == 404 and header(h, "content-type") == "application/json" and body == b""
            and int(header(h, "content-length") or 0) > 0, (st, h, body))
    st, h, body = req(port, "GET", "/assets/a.txt", headers={"Range": "bytes=100-200"})
    check_json("static 416", (st, h, body), 416, content_range="bytes */6")

    # A request that does not parse: the protocol layer's fixed answer.
    s = H.connect(port)
    try:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n")
        r = H.Reader(s).read_response(timeout=5)
        R.check("unparsable request: the fixed text 400, not the renderer",
                r is not None and r.status == 400
                and (header(r.headers, "content-type") or "").startswith("text/plain"),
                r and (r.status, r.headers, r.body))
    finally:
        s.close()

    # HTTP/2: the same answers.
    st, h, body = curl2(port, "GET", "/no/such/route")
    R.check("h2 404: the custom not-found", st == 404 and body == b'{"error":"custom not found"}\n', (st, h, body))
    check_json("h2 405", curl2(port, "POST", "/only-get"), 405, allow="GET, HEAD, OPTIONS")
    st, h, body = curl2(port, "OPTIONS", "/only-get")
    R.check("h2 OPTIONS 204", st == 204 and header(h, "allow") == "GET, HEAD, OPTIONS", (st, h, body))
    st, h, body = curl2(port, "GET", "/dir")
    R.check("h2 slash redirect 308", st == 308 and header(h, "location") == "/dir/", (st, h))
    check_json("h2 413 (read_body limit)", curl2(port, "POST", "/stream", data=b"y" * 500), 413)
    check_json("h2 413 (max_body)", curl2(port, "POST", "/whole", data=b"y" * 3000), 413)
    check_json("h2 500", curl2(port, "GET", "/raise"), 500)
    check_json("h2 500 (no answer)", curl2(port, "GET", "/silent"), 500)
    check_json("h2 403 (guard)", curl2(port, "GET", "/forbidden"), 403, cache_control="no-store")
    check_json("h2 401 (guard)", curl2(port, "GET", "/auth"), 401,
               www_authenticate='Basic realm="errors test", charset="UTF-8"')
    check_json("h2 static 404", curl2(port, "GET", "/assets/missing.txt"), 404)
    check_json("h2 Respond.error_reason", curl2(port, "GET", "/reason"), 409)
    st, h, body = curl2(port, "HEAD", "/assets/missing.txt")
    R.check("h2 static 404 to HEAD: no body", st == 404 and body == b""
            and header(h, "content-type") == "application/json", (st, h, body))
    r = h2_stall(port)
    head = r.get("head") or {}
    R.check("h2 408 (the body stopped coming) as the app's JSON",
            head.get(":status") == "408" and head.get("content-type") == "application/json"
            and is_json_error(r.get("body", "").encode("latin-1"), 408), r)

    # A renderer set costs answered requests nothing: 0 words per request.
    s = H.connect(port)
    rd = H.Reader(s)

    def loop(path, n):
        bad = 0
        for _ in range(n):
            s.sendall(b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n")
            r = rd.read_response(timeout=5)
            bad += r is None or r.status != 200
        return bad

    try:
        loop(b"/", 1500)  # warm-up: past the server's steady-state mark
        s0 = srv.stats()
        bad = loop(b"/", 3000)
        s1 = srv.stats()
        bad += loop(b"/assets/a.txt", 3000)
        s2 = srv.stats()
    finally:
        s.close()
    R.check("keep-alive 200s all correct", bad == 0, bad)
    H.check_no_words(R, "route 200 with a renderer set", s0, s1, 3000)
    H.check_no_words(R, "static 200 with a renderer set", s1, s2, 3000)

    R.check("json: the worker is alive", srv.alive() and req(port, "GET", "/")[0] == 200)
    log = srv.stderr_text()
    R.check("json: no renderer failure logged", "error renderer" not in log, log[-1500:])
    srv.stop_and_check(R, "json: server exits 0 on SIGTERM")


def raising_mode():
    srv = server("raising")
    port = srv.port
    st, h, body = req(port, "GET", "/nope")
    R.check("raising renderer: 404 falls back to the built-in text", st == 404 and body == b"404 Not Found\n"
            and header(h, "content-type") == "text/plain; charset=utf-8", (st, h, body))
    st, h, body = req(port, "GET", "/raise")
    R.check("raising renderer: 500 as text", st == 500 and body == b"500 Internal Server Error\n", (st, body))
    st, h, body = req(port, "POST", "/stream", body=b"y" * 500)
    R.check("raising renderer: 413 as text", st == 413 and body == b"413 Content Too Large\n", (st, body))
    st, h, body = req(port, "POST", "/only-get")
    R.check("raising renderer: 405 keeps Allow", st == 405 and header(h, "allow") == "GET, HEAD, OPTIONS", (st, h))
    st, h, body = req(port, "GET", "/auth")
    R.check("raising renderer: 401 keeps WWW-Authenticate", st == 401 and header(h, "www-authenticate")
            == 'Basic realm="errors test", charset="UTF-8"', (st, h))
    st, h, body = curl2(port, "GET", "/raise")
    R.check("raising renderer: h2 500 as text", st == 500 and body == b"500 Internal Server Error\n", (st, body))
    R.check("raising renderer: the worker is alive", srv.alive() and req(port, "GET", "/")[0] == 200)
    log = srv.stderr_text()
    R.check("raising renderer: the failure is logged",
            "error renderer failed for 404 (it raised Failure(\"renderer bug\"))" in log, log[-1500:])
    srv.stop_and_check(R, "raising: server exits 0 on SIGTERM")


def router_mode():
    srv = server("router")
    port = srv.port
    st, h, body = req(port, "GET", "/nope")
    R.check("router renderer: 404 as HTML", st == 404 and header(h, "content-type") == "text/html; charset=utf-8"
            and b"<title>404 Not Found</title>" in body, (st, h, body))
    st, h, body = req(port, "POST", "/only-get")
    R.check("router renderer: 405 as HTML with Allow", st == 405 and header(h, "allow") == "GET, HEAD, OPTIONS"
            and b"<h1>405 Method Not Allowed</h1>" in body, (st, h, body))
    st, h, body = req(port, "GET", "/teapot")
    R.check("router renderer: a handler's Respond.error is the server's (text)",
            st == 406 and body == b"406 Not Acceptable\n", (st, body))
    srv.stop_and_check(R, "router: server exits 0 on SIGTERM")


def reentrant_mode():
    srv = server("reentrant")
    port = srv.port
    st, h, body = req(port, "GET", "/nope")
    R.check("a renderer calling Respond.error_reason: the text answer, no recursion",
            st == 404 and body == b"404 Not Found: again: Not Found\n", (st, body))
    st, h, body = req(port, "POST", "/only-get")
    R.check("... 405 with Allow", st == 405 and body == b"405 Method Not Allowed: again: Method Not Allowed\n"
            and header(h, "allow") == "GET, HEAD, OPTIONS", (st, h, body))
    R.check("reentrant: the worker is alive", srv.alive() and req(port, "GET", "/")[0] == 200)
    srv.stop_and_check(R, "reentrant: server exits 0 on SIGTERM")


def none_mode():
    srv = server("none")
    port = srv.port
    st, h, body = req(port, "GET", "/nope")
    R.check("nothing set: 404 as always", st == 404 and body == b"404 Not Found\n", (st, body))
    st, h, body = req(port, "POST", "/only-get")
    R.check("nothing set: 405 as always", st == 405 and body == b"405 Method Not Allowed\n"
            and header(h, "allow") == "GET, HEAD, OPTIONS", (st, h, body))
    st, h, body = req(port, "POST", "/whole", body=b"y" * 300000)
    R.check("nothing set: 413 as always", st == 413 and body == b"Content Too Large\n", (st, body))
    st, h, body = req(port, "GET", "/assets/missing.txt")
    R.check("nothing set: static 404 is its HTML page", st == 404
            and header(h, "content-type") == "text/html; charset=utf-8" and b"<h1>404 Not Found</h1>" in body,
            (st, h, body))
    st, h, body = req(port, "GET", "/forbidden")
    R.check("nothing set: guard 403 as always", st == 403 and body == b"403 Forbidden\n", (st, body))
    st, h, body = req(port, "GET", "/raise")
    R.check("nothing set: 500 as always", st == 500 and body == b"Internal Server Error\n", (st, body))
    # The fix beside: read_body's limit holds for a body that came whole with its head.
    st, h, body = req(port, "POST", "/stream", body=b"y" * 500)
    R.check("read_body limit 100, 500-byte body with the head: 413 (was 200)",
            st == 413 and body == b"Content Too Large\n", (st, body))
    st, h, body = req(port, "POST", "/stream", body=b"y" * 100)
    R.check("read_body limit 100, 100-byte body: read", st == 200 and body == b"100\n", (st, body))
    srv.stop_and_check(R, "none: server exits 0 on SIGTERM")


if not os.path.exists(EXE):
    R.check("errors_server.exe built", False, EXE + " missing: run `dune build` first")
else:
    H.part(R, "json renderer and custom not-found", json_mode, stop_servers=True)
    H.part(R, "a renderer that raises", raising_mode, stop_servers=True)
    H.part(R, "a router's own renderer", router_mode, stop_servers=True)
    H.part(R, "a renderer that comes back through Respond", reentrant_mode, stop_servers=True)
    H.part(R, "nothing set", none_mode, stop_servers=True)
R.finish()
