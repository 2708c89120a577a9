"""Middleware end to end: test/server/middleware/middleware_server.exe (a router
behind Request_id, Security_headers, Cors and Route_metrics, one worker) on
127.0.0.1, over HTTP/1.1 (raw sockets) and HTTP/2 (python3-h2 streams one after
another on one connection, and curl: prior knowledge on plain, ALPN over
TLS), on the suite's backend and transport.

1. CORS: a preflight from an allowed origin is answered 204 with the
   Access-Control-* fields (before the router, whose own OPTIONS answer
   has Allow); from another origin 403; an actual request from an allowed
   origin gets Access-Control-Allow-Origin (echoed), from another none;
   Vary: Origin on both.
2. Security headers on every answer (404s included); HSTS only over TLS:
   absent on plain, and, with TLS, absent on the plain listener beside it.
3. Request ids: a valid incoming X-Request-Id is echoed and seen by the
   handler; an invalid one replaced; generated ones unique.
4. Route metrics: counted by route pattern (never the raw path) and
   status class, a request answered later included; a request the client
   abandons counts under status "none".
5. Hooks do not leak: a hook one request registers is not on the next
   request of the same HTTP/1.1 keep-alive connection, nor on the next
   HTTP/2 stream of the same connection.

Run: python3 test/e2e/test_middleware.py (dune build first). The last line
is `N passed, N failed`.
"""

import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("middleware")
H.suite_deadline(R, 120)

EXE = os.path.join(H.ROOT, "_build", "default", "test", "server", "middleware", "middleware_server.exe")
GOOD = "https://good.example"
EVIL = "https://evil.example"


class Srv(H.Program):
    def __init__(self, plain_port=None):
        extra = ["--plain-port", str(plain_port)] if plain_port else []
        super().__init__([EXE] + extra, ready_path="/plain")


def h1(sock, path, method="GET", headers=None):
    """One keep-alive request on [sock]; the parsed response."""
    h = {"Host": "127.0.0.1"}
    h.update(headers or {})
    raw = "%s %s HTTP/1.1\r\n" % (method, path) + "".join("%s: %s\r\n" % kv for kv in h.items()) + "\r\n"
    sock.sendall(raw.encode("latin-1"))
    return H.Reader(sock).read_response(head_only=(method == "HEAD"))


def one(port, path, method="GET", headers=None):
    s = H.connect(port)
    try:
        return h1(s, path, method, headers)
    finally:
        s.close()


H2_SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import h2_client as C
port, tls, spec = int(sys.argv[2]), sys.argv[3] == "1", json.loads(sys.argv[4])
c = C.Client(port, tls)
out = []
for method, path, headers in spec:
    if method == "RESET":
        # Opened, left unanswered a moment, then reset by the client.
        sid = c.get(path, headers=[tuple(h) for h in headers])
        c.pump(lambda: False, timeout=0.2)
        c.conn.reset_stream(sid)
        c.flush()
        ok = True
    else:
        sid = c.get(path, method=method, headers=[tuple(h) for h in headers])
        ok = c.pump(lambda: sid in c.ended or sid in c.reset)
    out.append({"sid": sid, "ended": ok, "head": c.heads.get(sid, {}), "body": c.bodies.get(sid, b"").decode("latin-1")})
print(json.dumps(out))
"""


def h2(port, reqs):
    """HTTP/2 requests one after the other on ONE connection (Debian's
    python3-h2, through h2_client.py; ALPN h2 over TLS, prior knowledge on
    plain): [reqs] as (method, path, [(name, value)]) or a path; a list
    of {"sid", "ended", "head": {name: value}, "body"}."""
    spec = [r if isinstance(r, tuple) else ("GET", r, []) for r in reqs]
    spec = [(m, p, [list(h) for h in hs]) for m, p, hs in spec]
    r = subprocess.run(["/usr/bin/python3", "-c", H2_SCRIPT, os.path.dirname(os.path.abspath(__file__)), str(port),
                          "1" if H.TLS else "0", json.dumps(spec)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30, env=H.CLIENT_ENV)
    try:
        return json.loads(r.stdout)
    except ValueError:
        return [{"error": r.stderr.decode("latin-1")[-500:]}]


def curl_h2(port, path, extra=()):
    """curl over HTTP/2 (prior knowledge on plain, ALPN over TLS): the
    last response's (status, headers, http_version)."""
    mode = ["--http2"] if H.TLS else ["--http2-prior-knowledge"]
    r = H.curl(mode + ["-D", "-", "-o", "/dev/null", "-w", "## %{http_version}\n"] + list(extra) + [H.url(port, path)])
    head, _, tail = r.stdout.partition(b"## ")
    heads = H.parse_curl_heads(head)
    status, hd = heads[-1] if heads else (None, {})
    return status, hd, tail.strip().decode(), r


def metrics(port):
    r = one(port, "/metrics")
    return r.body.decode("latin-1") if r else ""


def counter(text, route, status):
    m = re.search(r'^httpz_route_requests_total\{route="%s",status="%s"\} (\d+)$' % (re.escape(route), status),
                  text, re.M)
    return int(m.group(1)) if m else 0


def cors(port):
    pre = {"Origin": GOOD, "Access-Control-Request-Method": "DELETE",
           "Access-Control-Request-Headers": "content-type"}
    r = one(port, "/users/1", "OPTIONS", pre)
    R.check("CORS preflight, allowed origin: 204 with the Access-Control fields",
            r and r.status == 204 and r.header("access-control-allow-origin") == GOOD
            and r.header("access-control-allow-methods") == "GET, POST, DELETE"
            and r.header("access-control-allow-headers") == "Content-Type"
            and r.header("access-control-allow-credentials") == "true"
            and r.header("access-control-max-age") == "600"
            and "Origin" in r.header_all("vary") and r.header("allow") is None, r)
    r = one(port, "/users/1", "OPTIONS", dict(pre, Origin=EVIL))
    R.check("CORS preflight, other origin: 403, no Access-Control-Allow-Origin",
            r and r.status == 403 and r.header("access-control-allow-origin") is None, r)
    r = one(port, "/users/1", "OPTIONS")
    R.check("OPTIONS without Origin: the router's own answer (204 with Allow)",
            r and r.status == 204 and r.header("allow") is not None
            and r.header("access-control-allow-methods") is None, r)
    r = one(port, "/users/5", headers={"Origin": GOOD})
    R.check("CORS actual request, allowed origin: echoed, credentials, exposed, Vary",
            r and r.status == 200 and r.body == b"user 5\n" and r.header("access-control-allow-origin") == GOOD
            and r.header("access-control-allow-credentials") == "true"
            and r.header("access-control-expose-headers") == "X-Request-ID"
            and "Origin" in r.header_all("vary"), r)
    r = one(port, "/users/5", headers={"Origin": EVIL})
    R.check("CORS actual request, other origin: served, without Access-Control-Allow-Origin, Vary: Origin",
            r and r.status == 200 and r.header("access-control-allow-origin") is None
            and "Origin" in r.header_all("vary"), r)
    st, hd, ver, cp = curl_h2(port, "/users/6", ["-H", "Origin: " + GOOD])
    R.check("CORS over HTTP/2 (curl): allowed origin echoed",
            st == 200 and ver == "2" and hd.get("access-control-allow-origin") == GOOD, (st, hd, ver, cp.stderr[-300:]))
    res = h2(port, [("OPTIONS", "/users/6", [("origin", GOOD), ("access-control-request-method", "POST")]),
                    ("OPTIONS", "/users/6", [("origin", EVIL), ("access-control-request-method", "POST")]),
                    ("GET", "/users/6", [("origin", EVIL)])])
    hs = [x.get("head", {}) for x in res]
    R.check("CORS over HTTP/2: preflight 204, other origin's preflight 403, other origin's request bare",
            len(hs) == 3 and hs[0].get(":status") == "204"
            and hs[0].get("access-control-allow-methods") == "GET, POST, DELETE"
            and hs[1].get(":status") == "403" and "access-control-allow-origin" not in hs[1]
            and hs[2].get(":status") == "200" and "access-control-allow-origin" not in hs[2], res)


SEC = {"x-content-type-options": "nosniff", "x-frame-options": "DENY",
       "content-security-policy": "frame-ancestors 'none'", "referrer-policy": "strict-origin-when-cross-origin"}


def security(port, plain_port):
    for path in ("/users/1", "/nowhere"):
        r = one(port, path)
        R.check("security headers on %s (%d), nosniff once (the server's own)" % (path, r.status if r else 0),
                r and all(r.header(k) == v for k, v in SEC.items())
                and len(r.header_all("x-content-type-options")) == 1, r)
        hsts = r.header("strict-transport-security") if r else None
        if H.TLS:
            R.check("HSTS over TLS on %s" % path, hsts == "max-age=4242", hsts)
        else:
            R.check("no HSTS over plain HTTP on %s" % path, hsts is None, hsts)
    st, hd, ver, cp = curl_h2(port, "/users/1")
    R.check("security headers over HTTP/2 (curl), HSTS only over TLS",
            st == 200 and ver == "2" and all(hd.get(k) == v for k, v in SEC.items())
            and (hd.get("strict-transport-security") == "max-age=4242") == H.TLS, (st, hd, ver, cp.stderr[-300:]))
    if plain_port:
        s = H.socket.create_connection((H.HOST, plain_port), timeout=5)
        try:
            r = h1(s, "/users/1")
        finally:
            s.close()
        R.check("TLS server's plain listener: security headers, no HSTS",
                r and r.status == 200 and r.header("x-frame-options") == "DENY"
                and r.header("strict-transport-security") is None, r)


def request_ids(port):
    r = one(port, "/id", headers={"X-Request-Id": "client-id.42"})
    R.check("a valid incoming X-Request-Id: echoed and seen by the handler",
            r and r.header("x-request-id") == "client-id.42" and r.body == b"client-id.42", r)
    r = one(port, "/id", headers={"X-Request-Id": "bad id<>"})
    rid = r.header("x-request-id") if r else None
    R.check("an invalid one is replaced (and the handler sees the new one)",
            rid and rid != "bad id<>" and r.body.decode() == rid, r)
    r = one(port, "/id", headers={"X-Request-Id": "a" * 200})
    R.check("an overlong one is replaced", r and len(r.header("x-request-id") or "") < 100, r)
    s = H.connect(port)
    ids = []
    try:
        for _ in range(20):
            r = h1(s, "/id")
            ids.append(r.header("x-request-id") if r else None)
    finally:
        s.close()
    R.check("generated ids: present, unique, safe characters",
            all(ids) and len(set(ids)) == 20 and all(re.match(r"^[A-Za-z0-9_.:+/=@-]+$", i) for i in ids), ids[:3])
    res = h2(port, ["/id", "/id", ("GET", "/id", [("x-request-id", "h2-client-id")])])
    got = [x.get("head", {}).get("x-request-id") for x in res]
    R.check("request ids over HTTP/2: one per stream, unique, an incoming one echoed",
            len(got) == 3 and all(got) and got[0] != got[1] and got[2] == "h2-client-id"
            and [x["body"] for x in res] == got, res)


def metrics_part(port):
    before = metrics(port)
    for p in ("/users/1", "/users/2", "/users/3?x=1", "/later", "/fail", "/nope", "/nope2"):
        one(port, p)
    one(port, "/users/9", "POST")
    res = h2(port, ["/users/10", "/users/11"])
    R.check("HTTP/2 requests answered", len(res) == 2 and all(x.get("head", {}).get(":status") == "200" for x in res),
            res)
    after = metrics(port)
    d = lambda route, st: counter(after, route, st) - counter(before, route, st)  # noqa: E731
    R.check("metrics: /users/:id 2xx counted by pattern (GET and POST, HTTP/1.1 and HTTP/2)",
            d("/users/:id", "2xx") == 6, (d("/users/:id", "2xx"), after))
    R.check("metrics: a request answered later counts (/later 2xx)", d("/later", "2xx") == 1, after)
    R.check("metrics: 5xx by class", d("/fail", "5xx") == 1, after)
    R.check("metrics: unmatched paths under (unmatched), 4xx", d("(unmatched)", "4xx") == 2, after)
    R.check("metrics: never keyed by the raw path", "/users/1\"" not in after and "/nope" not in after, after)
    R.check("metrics: a latency histogram per route",
            re.search(r'^httpz_route_duration_seconds_count\{route="/later"\} \d+$', after, re.M) is not None
            and re.search(r'^httpz_route_duration_seconds_bucket\{route="/later",le="0.01"\} 0$', after, re.M)
            is not None, after)
    # A request its client abandons: no status.
    s = H.connect(port)
    H.send_get(s, "/hang")
    time.sleep(0.1)
    s.close()
    got = H.wait_until(lambda: counter(metrics(port), "/hang", "none") >= 1, 5)
    R.check("metrics: an abandoned request counts under status none", got, metrics(port)[-600:])


def no_leak(port):
    s = H.connect(port)
    try:
        a = h1(s, "/hook")
        b = h1(s, "/plain")
        c = h1(s, "/hook")
        d = h1(s, "/later")
    finally:
        s.close()
    R.check("HTTP/1.1 keep-alive: the hook is on its own request",
            a and a.header("x-hooked") == "yes" and c and c.header("x-hooked") == "yes", (a, c))
    R.check("HTTP/1.1 keep-alive: not on the next request of the connection",
            b and b.status == 200 and b.header("x-hooked") is None and d and d.status == 200
            and d.header("x-hooked") is None, (b, d))
    res = h2(port, ["/hook", "/plain", "/later", "/hook", "/plain"])
    R.check("HTTP/2: five streams one after the other on one connection, answered",
            [x.get("sid") for x in res] == [1, 3, 5, 7, 9] and all(x.get("ended") for x in res)
            and [x.get("head", {}).get(":status") for x in res] == ["200"] * 5, res)
    R.check("HTTP/2: the hook on its streams only (not on the next stream's pooled exchange)",
            [x.get("head", {}).get("x-hooked") for x in res] == ["yes", None, None, "yes", None], res)
    # A hook registered by a request that never answers (the client
    # leaves): the next request on the slot does not inherit it.
    s = H.connect(port)
    H.send_get(s, "/hook-hang")
    time.sleep(0.1)
    s.close()
    time.sleep(0.1)
    r = one(port, "/plain")
    R.check("HTTP/1.1: an abandoned request's hook is not on the next connection's request",
            r and r.status == 200 and r.header("x-hooked") is None, r)
    res = h2(port, [("RESET", "/hook-hang", []), "/plain", "/plain"])
    R.check("HTTP/2: a reset stream's hook is not on the next streams",
            len(res) == 3 and [x.get("head", {}).get(":status") for x in res[1:]] == ["200", "200"]
            and all("x-hooked" not in x.get("head", {}) for x in res), res)


def main():
    if not os.path.exists(EXE):
        R.check("middleware_server.exe built", False, EXE)
        return
    plain_port = H.free_port() if H.TLS else None
    srv = Srv(plain_port)
    H.part(R, "start", srv.start)
    if not srv.alive():
        return
    H.part(R, "CORS", lambda: cors(srv.port))
    H.part(R, "security headers", lambda: security(srv.port, plain_port))
    H.part(R, "request ids", lambda: request_ids(srv.port))
    H.part(R, "route metrics", lambda: metrics_part(srv.port))
    H.part(R, "hooks do not leak", lambda: no_leak(srv.port))
    srv.stop_and_check(R, "middleware_server exits 0 on SIGTERM")


main()
R.finish()
