"""HTTP/2 client scenarios for test_h2.py, run with /usr/bin/python3 (Debian's
python3-h2, python3-hyperframe and python3-hpack live there, not in the
pyenv python that runs the suites).

Usage: h2_client.py SCENARIO PORT TLS(0|1) [ARG [MORE...]]
(steady_state: ARG the number of requests per run, MORE the stats token;
files: ARG ignored, MORE the paths).
Prints one JSON object: what the scenario observed (test_h2.py checks it).
Raw scenarios build frames with hyperframe and hpack by hand, so that a
client may break the rules the h2 library would refuse to break.
"""

import hashlib
import json
import socket
import ssl
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.settings
import hpack
from hyperframe import frame as F

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
HOST = "127.0.0.1"


def connect(port, tls, timeout=5.0, rcvbuf=0, src=None):
    """[src]: the source address (any 127/8 address reaches the loopback)."""
    if rcvbuf or src:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            # Set before connecting: the window the client announces is
            # then small from the start.
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.settimeout(timeout)
        if src:
            s.bind((src, 0))
        s.connect((HOST, port))
    else:
        s = socket.create_connection((HOST, port), timeout=timeout)
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.set_alpn_protocols(["h2"])
        s = ctx.wrap_socket(s, server_hostname="localhost")
        assert s.selected_alpn_protocol() == "h2", s.selected_alpn_protocol()
    return s


class Client:
    """An h2 connection with a loop that reads until a condition holds."""

    def __init__(self, port, tls, rcvbuf=0):
        self.sock = connect(port, tls, rcvbuf=rcvbuf)
        cfg = h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
        self.conn = h2.connection.H2Connection(config=cfg)
        self.conn.initiate_connection()
        self.flush()
        self.bodies = {}
        self.heads = {}
        self.ended = set()
        self.reset = {}
        self.goaway = None

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def get(self, path, method="GET", body=None, headers=(), flush=True):
        """Opens a stream; with [flush] false its HEADERS wait for the
        next flush (several requests in one write)."""
        sid = self.conn.get_next_available_stream_id()
        h = [(":method", method), (":scheme", "https"), (":authority", "localhost"), (":path", path)]
        h += list(headers)
        if body is not None:
            h.append(("content-length", str(len(body))))
        self.conn.send_headers(sid, h, end_stream=body is None)
        self.bodies[sid] = b""
        if flush or body is not None:
            self.flush()
        if body is not None:
            self.send_body(sid, body)
        return sid

    def send_body(self, sid, body):
        off = 0
        while off < len(body):
            room = min(self.conn.local_flow_control_window(sid), self.conn.max_outbound_frame_size)
            if room <= 0:
                self.pump(lambda: self.conn.local_flow_control_window(sid) > 0)
                continue
            piece = body[off:off + room]
            self.conn.send_data(sid, piece)
            off += len(piece)
            self.flush()
        self.conn.end_stream(sid)
        self.flush()

    def pump(self, until, timeout=10.0):
        deadline = time.monotonic() + timeout
        while not until() and time.monotonic() < deadline:
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            if not data:
                break
            self.receive(data)
        return until()

    def receive(self, data):
        """Takes [data] from the server: its events recorded, received
        bytes acknowledged (window updates sent)."""
        for ev in self.conn.receive_data(data):
            if isinstance(ev, h2.events.ResponseReceived):
                self.heads[ev.stream_id] = dict(ev.headers)
            elif isinstance(ev, h2.events.DataReceived):
                self.bodies[ev.stream_id] = self.bodies.get(ev.stream_id, b"") + ev.data
                self.conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded):
                self.ended.add(ev.stream_id)
            elif isinstance(ev, h2.events.StreamReset):
                self.reset[ev.stream_id] = int(ev.error_code)
            elif isinstance(ev, h2.events.ConnectionTerminated):
                self.goaway = int(ev.error_code)
        self.flush()


def concurrent(port, tls, n):
    c = Client(port, tls)
    sids = [c.get("/a.txt" if i % 2 else "/text.txt") for i in range(n)]
    c.pump(lambda: all(s in c.ended for s in sids), timeout=20)
    return {"streams": n, "ended": sum(1 for s in sids if s in c.ended),
            "statuses": sorted(set(c.heads.get(s, {}).get(":status", "") for s in sids)),
            "lengths": sorted(set(len(c.bodies[s]) for s in sids))}


def mixed(port, tls, n, rcvbuf=0):
    """[n] streams of three files (3 MiB, 15 KiB, 14 B) requested at once,
    read slowly at first (small reads, pauses: the server meets a full
    socket mid-batch), then at full speed: each body's SHA-256 by path.
    [rcvbuf]: the client's socket receive buffer (a small one makes the
    server's writes, its last ones too, meet a full socket)."""
    c = Client(port, tls, rcvbuf=rcvbuf)
    c.conn.increment_flow_control_window(256 * 1024 * 1024)
    c.flush()
    paths = ["/big.bin", "/text.txt", "/a.txt"]
    sids = {}
    for i in range(n):
        sids[c.get(paths[i % 3], flush=False)] = paths[i % 3]
    c.flush()
    deadline = time.monotonic() + 25.0
    reads = 0
    while len(c.ended & set(sids)) < n and time.monotonic() < deadline:
        try:
            data = c.sock.recv(4096 if reads < 400 else 262144)
        except socket.timeout:
            continue
        if not data:
            break
        reads += 1
        if reads < 400 and reads % 20 == 0:
            time.sleep(0.01)
        c.receive(data)
    digests = {}
    for sid, path in sids.items():
        digests.setdefault(path, set()).add(hashlib.sha256(c.bodies.get(sid, b"")).hexdigest())
    return {"ended": len(c.ended & set(sids)), "digests": {p: sorted(d) for p, d in digests.items()}}


def files(port, tls, paths):
    """[paths] requested at once on one connection, then one after the
    other on the same connection: each body's SHA-256, per pass and path."""
    c = Client(port, tls)
    c.conn.increment_flow_control_window(64 * 1024 * 1024)
    c.flush()
    out = {}

    def run(tag, batch):
        sids = {}
        for p in batch:
            sids[c.get(p, flush=False)] = p
        c.flush()
        c.pump(lambda: set(sids) <= c.ended, timeout=20.0)
        for sid, p in sids.items():
            if sid in c.ended:
                out.setdefault(tag, {})[p] = hashlib.sha256(c.bodies.get(sid, b"")).hexdigest()

    run("together", paths)
    for p in paths:
        run("in turn", [p])
    return out


def post(port, tls, size):
    c = Client(port, tls)
    body = bytes(range(256)) * (size // 256)
    sid = c.get("/count", method="POST", body=body)
    c.pump(lambda: sid in c.ended)
    return {"status": c.heads.get(sid, {}).get(":status"), "body": c.bodies[sid].decode("latin-1"),
            "want": "%d bytes, sum %d" % (len(body), sum(body) & 0xFFFFFFFF)}


def reset_one(port, tls):
    c = Client(port, tls)
    # A small window: the large body stalls, its stream stays open.
    c.conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1024})
    c.flush()
    big = c.get("/big.bin")
    c.pump(lambda: big in c.heads)
    c.conn.reset_stream(big, error_code=8)  # CANCEL
    c.flush()
    small = c.get("/a.txt")
    c.pump(lambda: small in c.ended)
    after = c.get("/a.txt")
    c.pump(lambda: after in c.ended)
    return {"big_ended": big in c.ended, "small": c.bodies[small].decode("latin-1"),
            "after": c.bodies[after].decode("latin-1"), "goaway": c.goaway}


def stats(port, tls, token):
    """The server's /__httpz/stats over HTTP/1.1 on a connection of its own
    (not counted as a request, its allocation counted apart)."""
    import http.client
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        h = http.client.HTTPSConnection(HOST, port, timeout=5, context=ctx)
    else:
        h = http.client.HTTPConnection(HOST, port, timeout=5)
    h.request("GET", "/__httpz/stats", headers={"Authorization": "Bearer " + token})
    r = h.getresponse()
    body = r.read()
    h.close()
    if r.status != 200:
        raise RuntimeError("stats answered %d: %r" % (r.status, body[:200]))
    return json.loads(body.decode())


def steady_state(port, tls, n, token, batch=10, warmup=1500):
    """One connection, GETs of /a.txt in batches of [batch] concurrent
    streams sent in one write, every response read whole: [warmup] 200s and [warmup] 304s
    (If-None-Match), then the server's stats, [n] 200s, stats, [n] 304s,
    stats. A response other than the first 200's status and body (or a
    304 without body) is reported in "bad" (the first few)."""
    c = Client(port, tls)
    first = c.get("/a.txt")
    c.pump(lambda: first in c.ended)
    etag = c.heads.get(first, {}).get("etag")
    want_body = c.bodies[first]
    if c.heads.get(first, {}).get(":status") != "200" or etag is None:
        return {"error": "first GET: %r %r" % (c.heads.get(first), want_body[:100])}
    cond = [("if-none-match", etag)]

    def run(count, headers, want_status, body):
        bad = []
        done = 0
        while done < count and len(bad) <= 5:
            k = min(batch, count - done)
            # One write for the batch: the server reads its streams
            # together, so each batch holds [batch] exchanges at once and
            # the warm-up reaches the peak the measured runs reach (a new
            # peak takes pooled state once: about 560 words per exchange).
            sids = [c.get("/a.txt", headers=headers, flush=False) for _ in range(k)]
            c.flush()
            if not c.pump(lambda: all(s in c.ended or s in c.reset for s in sids), timeout=5):
                bad.append({"timeout": [s for s in sids if s not in c.ended]})
                break
            for s in sids:
                st, b = c.heads.pop(s, {}).get(":status"), c.bodies.pop(s, b"")
                if st != want_status or b != body or s in c.reset:
                    bad.append({"stream": s, "status": st, "body": b[:100].decode("latin-1"),
                                "reset": c.reset.get(s)})
            c.ended.difference_update(sids)
            done += k
        return bad

    t0 = time.monotonic()
    bad = run(warmup, (), "200", want_body) + run(warmup, cond, "304", b"")
    s0 = stats(port, tls, token)
    bad += run(n, (), "200", want_body)
    s1 = stats(port, tls, token)
    bad += run(n, cond, "304", b"")
    s2 = stats(port, tls, token)
    return {"body": want_body.decode("latin-1"), "etag": etag, "bad": bad[:6], "stats": [s0, s1, s2],
            "goaway": c.goaway, "seconds": round(time.monotonic() - t0, 2)}


# {1 Raw frames}

def raw_connect(port, tls, settings=True):
    s = connect(port, tls)
    s.sendall(PREFACE + (F.SettingsFrame(0).serialize() if settings else b""))
    return s


def whole_frames(s, buf):
    """The whole frames at the start of [buf] and the rest; a SETTINGS is
    acknowledged on the way."""
    frames = []
    while len(buf) >= 9:
        f, length = F.Frame.parse_frame_header(memoryview(buf[:9]))
        if len(buf) < 9 + length:
            break
        f.parse_body(memoryview(buf[9:9 + length]))
        buf = buf[9 + length:]
        if isinstance(f, F.SettingsFrame) and "ACK" not in f.flags:
            s.sendall(F.SettingsFrame(0, flags=["ACK"]).serialize())
        frames.append(f)
    return frames, buf


def read_frames(s, timeout=5.0):
    """Frames until the connection closes (or [timeout]): (type, stream, code)."""
    s.settimeout(timeout)
    buf = b""
    out = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            d = s.recv(65536)
        except (socket.timeout, ConnectionResetError, ssl.SSLError):
            break
        if not d:
            break
        buf += d
        frames, buf = whole_frames(s, buf)
        for f in frames:
            out.append((f.type, f.stream_id, getattr(f, "error_code", None)))
            if isinstance(f, F.GoAwayFrame):
                return out
    return out


def goaway_code(frames):
    for t, _sid, code in frames:
        if t == F.GoAwayFrame.type:
            return code
    return None


def request_block(enc, path="/a.txt", extra=()):
    return enc.encode([(":method", "GET"), (":scheme", "https"), (":authority", "localhost"),
                       (":path", path)] + list(extra))


def rapid_reset(port, tls):
    s = raw_connect(port, tls)
    enc = hpack.Encoder()
    out = b""
    for i in range(300):
        sid = 1 + 2 * i
        out += F.HeadersFrame(sid, data=request_block(enc), flags=["END_HEADERS", "END_STREAM"]).serialize()
        out += F.RstStreamFrame(sid, error_code=8).serialize()
    try:
        s.sendall(out)
    except OSError:
        pass
    return {"goaway": goaway_code(read_frames(s))}


def continuation_flood(port, tls):
    s = raw_connect(port, tls)
    enc = hpack.Encoder()
    block = request_block(enc)
    out = F.HeadersFrame(1, data=block, flags=["END_STREAM"]).serialize()
    filler = enc.encode([("x-filler", "a" * 100)])
    try:
        s.sendall(out)
        for _ in range(200):
            s.sendall(F.ContinuationFrame(1, data=filler).serialize())
    except OSError:
        pass
    return {"goaway": goaway_code(read_frames(s))}


def hpack_bomb(port, tls):
    s = raw_connect(port, tls)
    # By hand, so the dynamic table holds exactly one entry: a 4000-byte
    # field (literal with incremental indexing, new name), then 1000
    # one-byte references to it (index 62): 4 MB of header list from 5 KB.
    base = (b"\x82\x87" + b"\x04\x06/a.txt" + b"\x01\x09localhost")
    first = base + b"\x40\x06x-bomb" + b"\x7f\xa1\x1e" + b"b" * 4000
    out = F.HeadersFrame(1, data=first, flags=["END_HEADERS", "END_STREAM"]).serialize()
    out += F.HeadersFrame(3, data=base + b"\xbe" * 1000, flags=["END_HEADERS", "END_STREAM"]).serialize()
    try:
        s.sendall(out)
    except OSError:
        pass
    frames = read_frames(s)
    answered = [f for f in frames if f[0] == F.HeadersFrame.type and f[1] == 3]
    return {"goaway": goaway_code(frames), "stream3_answered": bool(answered),
            "stream1_answered": any(f[0] == F.HeadersFrame.type and f[1] == 1 for f in frames)}


def zero_window(port, tls):
    """A slow reader: a stream window of 0 that never opens, the
    connection kept busy with PINGs. The stream must be reset."""
    s = connect(port, tls)
    enc = hpack.Encoder()
    s.sendall(PREFACE + F.SettingsFrame(0, settings={F.SettingsFrame.INITIAL_WINDOW_SIZE: 0}).serialize()
              + F.HeadersFrame(1, data=request_block(enc), flags=["END_HEADERS", "END_STREAM"]).serialize())
    s.settimeout(0.3)
    t0 = time.monotonic()
    buf = b""
    last_ping = 0.0
    while time.monotonic() - t0 < 8:
        try:
            if time.monotonic() - last_ping >= 0.25:  # well under the PING flood limit
                last_ping = time.monotonic()
                s.sendall(F.PingFrame(0, opaque_data=b"12345678").serialize())
            d = s.recv(65536)
            if not d:
                break
            buf += d
        except socket.timeout:
            continue
        except OSError:
            break
        frames, buf = whole_frames(s, buf)
        for f in frames:
            if isinstance(f, F.RstStreamFrame) and f.stream_id == 1:
                return {"reset": f.error_code, "after": round(time.monotonic() - t0, 2)}
            if isinstance(f, F.GoAwayFrame):
                return {"goaway": f.error_code}
    return {"reset": None}


def first_not_settings(port, tls):
    s = raw_connect(port, tls, settings=False)
    enc = hpack.Encoder()
    try:
        s.sendall(F.HeadersFrame(1, data=request_block(enc), flags=["END_HEADERS", "END_STREAM"]).serialize())
    except OSError:
        pass
    return {"goaway": goaway_code(read_frames(s))}


def main():
    scenario, port, tls = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
    arg = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    more = sys.argv[5:]
    fns = {"concurrent": lambda: concurrent(port, tls, arg), "post": lambda: post(port, tls, arg),
           "mixed": lambda: mixed(port, tls, arg, *[int(m) for m in more]),
           "files": lambda: files(port, tls, more),
           "reset_one": lambda: reset_one(port, tls), "rapid_reset": lambda: rapid_reset(port, tls),
           "continuation_flood": lambda: continuation_flood(port, tls),
           "hpack_bomb": lambda: hpack_bomb(port, tls),
           "first_not_settings": lambda: first_not_settings(port, tls),
           "zero_window": lambda: zero_window(port, tls),
           "steady_state": lambda: steady_state(port, tls, arg, *more)}
    try:
        print(json.dumps(fns[scenario]()))
    except Exception as e:  # reported, checked as a failure by test_h2.py
        print(json.dumps({"error": "%s: %s" % (type(e).__name__, e)}))


if __name__ == "__main__":
    main()
