"""Reference verdicts from h11 (python3-h11) for test_h1client's differential test.

Generates a deterministic corpus of HTTP/1.1 responses (valid and hostile),
parses each with h11 as a client that sent the given method, and prints one
line per case:  METHOD TAB TAG TAB hex(response) TAB verdict
where verdict is "error\t-" or "STATUS,FRAMING,LENGTH,KEEPALIVE,NFIELDS,NINTERIM"
(NFIELDS: fields other than Content-Length, which h11 merges when repeated)
then TAB and the body's: "data:HEX" (complete), "short" (the stream ended
first: the whole response is all the server sent), or "error".
(FRAMING: length / chunked / close; LENGTH: the body length for "length").
TAG names a rule on which httpz is deliberately stricter than h11 ("-" for
none): the OCaml side then accepts "httpz error, h11 ok" for that case only.
"""
import random, sys
import h11

def verdict(method, data):
    c = h11.Connection(h11.CLIENT)
    c.send(h11.Request(method=method, target="/", headers=[("Host", "x")]))
    c.send(h11.EndOfMessage())
    c.receive_data(data)
    interim = 0
    try:
        while True:
            ev = c.next_event()
            if isinstance(ev, h11.InformationalResponse):
                interim += 1
                continue
            if ev is h11.NEED_DATA:
                return "partial\t-"
            if isinstance(ev, h11.Response):
                r = c._reader
                name = type(r).__name__
                if name == "ContentLengthReader":
                    fr, n = "length", r._remaining
                elif name == "ChunkedReader":
                    fr, n = "chunked", -1
                elif name == "Http10Reader":
                    fr, n = "close", -1
                else:
                    fr, n = name, -1
                ka = 1 if c._cstate.keep_alive else 0
                if ev.http_version != b"1.1":
                    ka = -1  # h11 has no HTTP/1.0 keep-alive: not compared
                head = "%d,%s,%d,%d,%d,%d" % (ev.status_code, fr, n, ka, len([h for h in ev.headers if h[0] != b"content-length"]), interim)
                return head + "\t" + body(c)
            return "unexpected " + repr(ev)
    except h11.RemoteProtocolError:
        return "error\t-"

def body(c):
    """The body after the head: "data:HEX" once complete, "short" if the
    stream ends first, "error" if its framing is invalid."""
    data = b""
    try:
        while True:
            ev = c.next_event()
            if isinstance(ev, h11.Data):
                data += ev.data
            elif isinstance(ev, h11.EndOfMessage):
                return "data:" + data.hex()
            elif ev is h11.NEED_DATA:
                break
            else:
                return "unexpected " + repr(ev)
    except h11.RemoteProtocolError:
        return "error"
    c.receive_data(b"")
    try:
        while True:
            ev = c.next_event()
            if isinstance(ev, h11.Data):
                data += ev.data
            elif isinstance(ev, h11.EndOfMessage):
                return "data:" + data.hex()
            else:
                return "short"
    except h11.RemoteProtocolError:
        return "short"

rng = random.Random(36)
NAMES = ["Server", "Date", "Content-Type", "X-Thing", "Vary", "ETag", "Cache-Control", "Set-Cookie"]

def fields(n):
    return [(rng.choice(NAMES), "v%d" % rng.randrange(1000)) for _ in range(n)]

def head(status, version="1.1", reason="OK", hs=(), eol="\r\n"):
    s = "HTTP/%s %d %s%s" % (version, status, reason, eol)
    for k, v in hs:
        s += "%s: %s%s" % (k, v, eol)
    return s + eol

cases = []
def add(method, data, tag="-"):
    cases.append((method, tag, data.encode("latin-1") if isinstance(data, str) else data))

for _ in range(300):
    method = rng.choice(["GET", "GET", "POST", "HEAD"])
    status = rng.choice([200, 200, 201, 204, 206, 301, 304, 404, 500, 503])
    version = rng.choice(["1.1", "1.1", "1.1", "1.0"])
    hs = fields(rng.randrange(6))
    kind = rng.choice(["cl", "cl", "chunked", "none", "close", "keepalive", "interim", "cl2"])
    if kind == "cl":
        hs.append(("Content-Length", str(rng.randrange(100000))))
    elif kind == "cl2":
        n = str(rng.randrange(100)); hs += [("Content-Length", n), ("content-length", n)]
    elif kind == "chunked" and version == "1.1":
        hs.append(("Transfer-Encoding", rng.choice(["chunked", "Chunked", " chunked"])))
    elif kind == "close":
        hs += [("Connection", rng.choice(["close", "Close", "keep-alive, close"])), ("Content-Length", "3")]
    elif kind == "keepalive":
        hs += [("Connection", "keep-alive"), ("Content-Length", "0")]
    rng.shuffle(hs)
    pre = ""
    if kind == "interim":
        for _ in range(rng.randrange(1, 4)):
            pre += head(rng.choice([100, 103]), reason="Continue", hs=fields(rng.randrange(3)))
        hs.append(("Content-Length", "1"))
    add(method, pre + head(status, version, rng.choice(["OK", "", "Not Found", "x y\tz"]), hs))

# Hostile ones: where both must refuse ("-"), or httpz alone does (tag).
hostile = [
    ("GET", head(200, hs=[("Content-Length", "1"), ("Content-Length", "2")]), "-"),
    ("GET", head(200, hs=[("Content-Length", "-1")]), "-"),
    ("GET", head(200, hs=[("Content-Length", "1x")]), "-"),
    ("GET", head(200, hs=[("Content-Length", "")]), "-"),
    ("GET", head(200, hs=[("Content-Length", "0x10")]), "-"),
    ("GET", head(200, hs=[("Transfer-Encoding", "gzip")]), "-"),
    ("GET", head(200, hs=[("Transfer-Encoding", "gzip, chunked")]), "-"),
    ("GET", head(200, hs=[("Transfer-Encoding", "chunked, gzip")]), "-"),
    ("GET", head(200, hs=[("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")]), "-"),
    ("GET", head(200, hs=[("Transfer-Encoding", "chunked"), ("Content-Length", "5")]), "te_cl"),
    ("GET", head(200, version="1.0", hs=[("Transfer-Encoding", "chunked")]), "te_http10"),
    ("GET", head(200, hs=[("Content-Length", "5, 5")]), "cl_list"),
    ("GET", head(200, hs=[("Content-Length", "5"), ("Content-Length", "5")]), "-"),
    ("GET", "HTTP/1.1 200 OK\r\nContent-Length: 1\nX: y\r\n\r\n", "bare_lf"),
    ("GET", "HTTP/1.1 200 OK\nContent-Length: 1\n\n", "bare_lf"),
    ("GET", "HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 1\r\n\r\n", "obs_fold"),
    ("GET", "HTTP/1.1 200 OK\r\nX : a\r\nContent-Length: 1\r\n\r\n", "-"),
    ("GET", "HTTP/1.1 200 OK\r\nX\x00: a\r\n\r\n", "-"),
    ("GET", "HTTP/1.1 200 OK\r\nX: a\x00b\r\n\r\n", "-"),
    ("GET", "HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", "-"),
    ("GET", "HTTP/1.1 200 OK\r\n: a\r\n\r\n", "-"),
    ("GET", "HTTP/2.0 200 OK\r\n\r\n", "major_version"),
    ("GET", "HTTP/1.1 20 OK\r\n\r\n", "-"),
    ("GET", "HTTP/1.1 2000 OK\r\n\r\n", "-"),
    ("GET", "HTTP/1.1 099 OK\r\n\r\n", "status_range"),
    ("GET", "HTTP/1.1 600 OK\r\n\r\n", "status_range"),
    ("GET", "HTTP/1.1 999 OK\r\n\r\n", "status_range"),
    ("GET", "http/1.1 200 OK\r\n\r\n", "-"),
    ("GET", "HTTP/1.1  200 OK\r\n\r\n", "-"),
    ("GET", "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", "-"),
    ("GET", "HTTP/1.1 200 OK\x01\r\n\r\n", "reason_ctl"),
    ("GET", "ICY 200 OK\r\n\r\n", "-"),
    ("GET", "\r\nHTTP/1.1 200 OK\r\n\r\n", "-"),
    ("HEAD", head(200, hs=[("Content-Length", "1000")]), "-"),
    ("HEAD", head(200, hs=[("Transfer-Encoding", "chunked")]), "-"),
    ("GET", head(304, hs=[("Content-Length", "1000")]), "-"),
    ("GET", head(204, hs=[("Content-Length", "0")]), "-"),
    ("GET", head(200, version="1.0", hs=[("Connection", "keep-alive"), ("Content-Length", "0")]), "-"),
    ("GET", head(200), "-"),
    ("GET", head(100) * 9 + head(200, hs=[("Content-Length", "0")]), "interim_bound"),
    ("GET", head(103, hs=[("Link", "</a>; rel=preload")]) + head(200, hs=[("Content-Length", "2")]), "-"),
]
for m, d, tag in hostile:
    add(m, d, tag)

# Bodies: every framing, valid and hostile chunked codings.
CH = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
bodies = [
    (CH + "5\r\nhello\r\n0\r\n\r\n", "-"),
    (CH + "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", "-"),
    (CH + "A\r\n0123456789\r\n0\r\n\r\n", "-"),
    (CH + "5;ext=1\r\nhello\r\n0\r\n\r\n", "-"),
    (CH + "5\r\nhello\r\n0\r\nServer-Timing: a\r\nX-Checksum: 1\r\n\r\n", "-"),
    (CH + "5\r\nhello\r\n0\r\nContent-Length: 5\r\n\r\n", "forbidden_trailer"),
    (CH + "5\r\nhello\r\n", "-"),
    (CH + "5\r\nhel", "-"),
    (CH + "5\r\nhelloXX0\r\n\r\n", "-"),
    (CH + "-5\r\nhello\r\n0\r\n\r\n", "-"),
    (CH + "0x5\r\nhello\r\n0\r\n\r\n", "-"),
    (CH + "g\r\nhello\r\n0\r\n\r\n", "-"),
    (CH + "5\nhello\r\n0\r\n\r\n", "bare_lf"),
    (CH + "5\r\nhello\n0\r\n\r\n", "-"),
    (CH + "5 \r\nhello\r\n0\r\n\r\n", "chunk_size_ws"),
    (CH + "fffffffffffffffff\r\nx\r\n0\r\n\r\n", "size_overflow"),
    (CH + "5\r\nhello\r\n0\r\nX: a\r\n b\r\n\r\n", "obs_fold"),
    ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "-"),
    ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloEXTRA", "-"),
    ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel", "-"),
    ("HTTP/1.1 200 OK\r\n\r\nread until the server closes", "-"),
    ("HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\n", "-"),
    ("HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n", "-"),
]
for d, tag in bodies:
    add("GET", d, tag)
add("HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n")
for _ in range(100):
    sizes = [rng.randrange(1, 40) for _ in range(rng.randrange(0, 5))]
    payload = "".join("%x\r\n%s\r\n" % (n, "".join(rng.choice("abc\r\n\x00") for _ in range(n))) for n in sizes)
    add("GET", CH + payload + "0\r\n\r\n")

for method, tag, data in cases:
    print("%s\t%s\t%s\t%s" % (method, tag, data.hex(), verdict(method, data)))
