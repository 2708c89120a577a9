"""HTTP/2 scenarios for test_h2_redteam.py (the holes of issue 34), run
with /usr/bin/python3 like h2_client.py, whose helpers it uses.

Usage: h2_redteam_client.py SCENARIO PORT TLS(0|1) [ARG...]
Prints one JSON object: what the scenario observed.
"""

import json
import socket
import ssl
import sys
import time

import hpack
from hyperframe import frame as F

import h2_client as C


def connect_from(src, port, tls):
    """A raw HTTP/2 connection from [src], preface and SETTINGS sent."""
    s = C.connect(port, tls, src=src)
    s.sendall(C.PREFACE + F.SettingsFrame(0).serialize())
    return s


def read_until(s, pred, timeout):
    """Frames until [pred frames] holds, the connection ends or [timeout]:
    (frames, closed). Each frame is (type, stream, code, flags, data)."""
    s.settimeout(0.2)
    buf = b""
    out = []
    closed = False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not pred(out):
        try:
            d = s.recv(65536)
        except socket.timeout:
            continue
        except (ConnectionResetError, ssl.SSLError, OSError):
            closed = True
            break
        if not d:
            closed = True
            break
        buf += d
        frames, buf = C.whole_frames(s, buf)
        for f in frames:
            out.append((f.type, f.stream_id, getattr(f, "error_code", None), sorted(f.flags),
                        getattr(f, "data", b"")))
    return out, closed


def status_of(frames, sid, dec):
    for t, stream, _c, _fl, data in frames:
        if t == F.HeadersFrame.type and stream == sid:
            return int(dict(dec.decode(data))[":status"])
    return None


def ended(sid):
    def pred(frames):
        return any(s == sid and ("END_STREAM" in fl or t == F.RstStreamFrame.type)
                   for t, s, _c, fl, _d in frames)
    return pred


def statuses(port, tls, src, n, path, authority="localhost", *extra):
    """[n] GETs of [path], one after the other on one connection from
    [src]: their statuses. [extra]: NAME=VALUE fields added to each."""
    s = connect_from(src, port, tls)
    enc, dec = hpack.Encoder(), hpack.Decoder()
    fields = [tuple(e.split("=", 1)) for e in extra]
    got = []
    for i in range(n):
        sid = 1 + 2 * i
        block = enc.encode([(":method", "GET"), (":scheme", "https"), (":authority", authority),
                            (":path", path)] + fields)
        s.sendall(F.HeadersFrame(sid, data=block, flags=["END_HEADERS", "END_STREAM"]).serialize())
        frames, _ = read_until(s, ended(sid), 5.0)
        got.append(status_of(frames, sid, dec))
    s.close()
    return {"statuses": got}


def half_open(port, tls, wait):
    """HEADERS without END_STREAM, the answer read, then nothing sent:
    whether the stream is reset (its code) and whether and when the
    server ends the connection within [wait] seconds."""
    s = C.raw_connect(port, tls)
    enc, dec = hpack.Encoder(), hpack.Decoder()
    t0 = time.monotonic()
    s.sendall(F.HeadersFrame(1, data=C.request_block(enc), flags=["END_HEADERS"]).serialize())
    frames, closed = read_until(s, lambda fs: any(t == F.GoAwayFrame.type for t, *_ in fs), wait)
    rst = [c for t, sid, c, _fl, _d in frames if t == F.RstStreamFrame.type and sid == 1]
    if not closed:
        # After a GOAWAY the server closes: wait for the end of the stream.
        more, closed = read_until(s, lambda fs: False, 3.0)
        frames += more
    goaway = next((c for t, _s, c, _fl, _d in frames if t == F.GoAwayFrame.type), None)
    return {"status": status_of(frames, 1, dec), "rst": rst[0] if rst else None, "goaway": goaway,
            "closed": closed, "after": round(time.monotonic() - t0, 2)}


def hold_half_open(port, tls, n, seconds):
    """[n] connections each with one answered half-open stream, held for
    [seconds]; then how many the server closed."""
    socks = []
    for _ in range(n):
        s = C.raw_connect(port, tls)
        enc = hpack.Encoder()
        s.sendall(F.HeadersFrame(1, data=C.request_block(enc), flags=["END_HEADERS"]).serialize())
        read_until(s, lambda fs: any(t == F.DataFrame.type and "END_STREAM" in fl for t, _s, _c, fl, _d in fs), 5.0)
        socks.append(s)
    time.sleep(seconds)
    closed = 0
    for s in socks:
        s.settimeout(0.5)
        try:
            while True:
                d = s.recv(65536)
                if not d:
                    closed += 1
                    break
        except socket.timeout:
            pass
        except OSError:
            closed += 1
        s.close()
    return {"closed": closed}


def trickle(port, tls, interval, limit):
    """A POST to a handler that reads its body (the async demo's /count),
    its bytes sent one every [interval] s: how the server ends it (a
    status, or a reset's code) and after how long; [limit] s at most."""
    s = C.raw_connect(port, tls)
    enc, dec = hpack.Encoder(), hpack.Decoder()
    block = enc.encode([(":method", "POST"), (":scheme", "https"), (":authority", "localhost"),
                        (":path", "/count"), ("content-length", "100000")])
    s.sendall(F.HeadersFrame(1, data=block, flags=["END_HEADERS"]).serialize())
    t0 = time.monotonic()
    sent = 0
    frames = []
    while time.monotonic() - t0 < limit:
        try:
            s.sendall(F.DataFrame(1, data=b"x").serialize())
            sent += 1
        except OSError:
            break
        more, closed = read_until(s, ended(1), interval)
        frames += more
        if ended(1)(frames) or closed:
            break
    rst = [c for t, sid, c, _fl, _d in frames if t == F.RstStreamFrame.type and sid == 1]
    return {"status": status_of(frames, 1, dec), "rst": rst[0] if rst else None, "sent": sent,
            "after": round(time.monotonic() - t0, 2)}


def body_flood(port, tls, conns, streams, size, hold):
    """[conns] connections, each opening [streams] POSTs of [size] bytes
    to a file (a handler that never reads a body), their DATA sent as far
    as the windows let; held [hold] s. Prints a line when all is sent."""
    import h2.exceptions
    clients = []
    answered = 0
    sent = 0
    for _ in range(conns):
        c = C.Client(port, tls)
        c.sock.settimeout(0.05)
        for _ in range(streams):
            sid = c.conn.get_next_available_stream_id()
            c.conn.send_headers(sid, [(":method", "POST"), (":scheme", "https"), (":authority", "localhost"),
                                      (":path", "/a.txt"), ("content-length", str(size))], end_stream=False)
            c.flush()
            off = 0
            while off < size:
                try:
                    room = min(c.conn.local_flow_control_window(sid), c.conn.max_outbound_frame_size, size - off)
                except (h2.exceptions.ProtocolError, KeyError):
                    break
                if room <= 0:
                    break
                try:
                    c.conn.send_data(sid, b"y" * room)
                except h2.exceptions.ProtocolError:  # reset by the server: it wants no more
                    break
                off += room
                sent += room
                c.flush()
            try:
                while True:
                    d = c.sock.recv(65536)
                    if not d:
                        break
                    c.receive(d)
            except (socket.timeout, ssl.SSLError, BlockingIOError):
                pass
            except h2.exceptions.ProtocolError:
                pass
        answered += len(c.heads)
        clients.append(c)
    print(json.dumps({"sent": sent, "answered": answered}), flush=True)
    time.sleep(hold)
    return {"answered": answered, "sent": sent}


def first_flight(port, tls, n):
    """[n] GETs sent with the preface, before the server's SETTINGS are
    read (so not acknowledged): how many are answered, how many refused
    (REFUSED_STREAM), and the GOAWAY code if any."""
    s = C.connect(port, tls)
    enc = hpack.Encoder()
    out = C.PREFACE + F.SettingsFrame(0).serialize()
    for i in range(n):
        out += F.HeadersFrame(1 + 2 * i, data=C.request_block(enc),
                              flags=["END_HEADERS", "END_STREAM"]).serialize()
    s.sendall(out)
    def done(fs):
        ends = sum(1 for t, _s, c, fl, _d in fs
                   if (t == F.DataFrame.type and "END_STREAM" in fl) or (t == F.RstStreamFrame.type and c == 7))
        return ends >= n or any(t == F.GoAwayFrame.type for t, *_ in fs)

    frames, _ = read_until(s, done, 4.0)
    answered = len({sid for t, sid, _c, fl, _d in frames if t == F.DataFrame.type and "END_STREAM" in fl})
    refused = sum(1 for t, _s, c, _fl, _d in frames if t == F.RstStreamFrame.type and c == 7)
    goaway = next((c for t, _s, c, _fl, _d in frames if t == F.GoAwayFrame.type), None)
    return {"answered": answered, "refused": refused, "goaway": goaway}


def abort_download(port, tls, path):
    """GET [path] (a large file) within the default 65,535-byte window,
    reset (CANCEL) once that much came: how many body bytes arrived."""
    s = C.raw_connect(port, tls)
    enc = hpack.Encoder()
    s.sendall(F.HeadersFrame(1, data=C.request_block(enc, path), flags=["END_HEADERS", "END_STREAM"]).serialize())

    def got(fs):
        return sum(len(d) for t, sid, _c, _fl, d in fs if t == F.DataFrame.type and sid == 1)

    frames, _ = read_until(s, lambda fs: got(fs) >= 65535, 5.0)
    s.sendall(F.RstStreamFrame(1, error_code=8).serialize())
    time.sleep(0.3)
    s.close()
    return {"received": got(frames)}


def main():
    scenario, port, tls = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
    args = sys.argv[4:]
    fns = {
        "statuses": lambda: statuses(port, tls, args[0], int(args[1]), *args[2:]),
        "half_open": lambda: half_open(port, tls, float(args[0])),
        "hold_half_open": lambda: hold_half_open(port, tls, int(args[0]), float(args[1])),
        "first_flight": lambda: first_flight(port, tls, int(args[0])),
        "abort_download": lambda: abort_download(port, tls, args[0]),
        "trickle": lambda: trickle(port, tls, float(args[0]), float(args[1])),
        "body_flood": lambda: body_flood(port, tls, *[int(a) for a in args[:3]], float(args[3])),
    }
    try:
        print(json.dumps(fns[scenario]()))
    except Exception as e:  # reported, checked as a failure by the suite
        print(json.dumps({"error": "%s: %s" % (type(e).__name__, e)}))


if __name__ == "__main__":
    main()
