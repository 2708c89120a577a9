#!/usr/bin/env python3
"""WebSocket end to end, on the suite's backend (HTTPZ_IO) and transport
(HTTPZ_TRANSPORT: ws:// or wss://):

- a fixed subset of Autobahn|Testsuite's fuzzing client against
  examples/ws_echo.exe (each case is a check: OK, NON-STRICT or
  INFORMATIONAL pass); the whole of sections 1-13 is `make autobahn`;
- real clients (wsproto, /usr/bin/python3): echo, fragments, ping/pong, the
  close handshake, close codes for bad input (1002, 1007, 1009), a deflate
  bomb (1009), a client that never reads while another is served;
- examples/chat.exe: its page, and a broadcast reaching every reader
  while one member never reads;
- origins: a cross-site upgrade gets 403 by default, the server's own
  page and a client without Origin 101, a site given to --allow-origin
  101.

Autobahn is installed by scripts/deps.sh (test step) into AUTOBAHN_DIR
(default ~/.cache/httpz/autobahn); missing, it is a failure, not a skip.
"""

import json
import os
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

try:
    from wsproto import WSConnection, ConnectionType
    from wsproto.events import (AcceptConnection, BytesMessage, CloseConnection, Message, Ping, Pong,
                                Request, TextMessage)
    from wsproto.extensions import PerMessageDeflate
except ImportError:  # pragma: no cover
    # Debian's python3-wsproto is installed for /usr/bin/python3, which may
    # not be the python3 first on PATH (pyenv): run under it instead.
    if os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3") \
            and os.access("/usr/bin/python3", os.X_OK):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    print("wsproto is missing: install Debian's python3-wsproto (scripts/deps.sh test)")
    print("0 passed, 1 failed")
    sys.exit(1)

R = H.Results("websocket")
H.suite_deadline(R, 110)

AUTOBAHN_DIR = os.environ.get("AUTOBAHN_DIR", os.path.expanduser("~/.cache/httpz/autobahn"))
WSTEST = os.path.join(AUTOBAHN_DIR, "bin", "wstest")

# Sections 1-7 and 10 whole; a sample of 9 (large messages) and of 12-13
# (permessage-deflate, each parameter combination once).
AUTOBAHN_CASES = ["1.*", "2.*", "3.*", "4.*", "5.*", "6.*", "7.*", "10.*",
                  "9.1.1", "9.2.1", "12.1.1", "12.1.2", "12.2.1",
                  "13.1.1", "13.2.1", "13.3.1", "13.4.1", "13.5.1", "13.6.1", "13.7.1"]
PASSING = ("OK", "NON-STRICT", "INFORMATIONAL")


def scheme():
    return "wss" if H.TLS else "ws"


def echo_server(*extra):
    return H.Program([H.example("ws_echo")] + list(extra)).start()


# {1 A client}

class Client:
    """A wsproto client over the suite's transport."""

    def __init__(self, port, path="/", deflate=False, rcvbuf=None):
        self.sock = H.connect(port, timeout=10, rcvbuf=rcvbuf)
        self.ws = WSConnection(ConnectionType.CLIENT)
        self.events = []
        self.closed = None
        exts = [PerMessageDeflate()] if deflate else []
        self.sock.sendall(self.ws.send(Request(host="127.0.0.1", target=path, extensions=exts)))
        ev = self.next_event()
        if not isinstance(ev, AcceptConnection):
            raise H.ProtocolError("not accepted: %r" % (ev,))
        self.accepted = ev

    def raw(self, data):
        self.sock.sendall(data)

    def send(self, event):
        self.sock.sendall(self.ws.send(event))

    def next_event(self, timeout=10):
        deadline = time.monotonic() + timeout
        while not self.events:
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout("no event")
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(1 << 20)
            except (ConnectionResetError, BrokenPipeError):
                data = b""
            self.ws.receive_data(data if data else None)
            self.events.extend(self.ws.events())
            if not data and not self.events:
                raise EOFError("connection closed")
        return self.events.pop(0)

    def message(self, timeout=10):
        """The next whole message (text or bytes), answering pings."""
        parts = []
        while True:
            ev = self.next_event(timeout)
            if isinstance(ev, Message):
                parts.append(ev.data)
                if ev.message_finished:
                    return ("" if isinstance(ev, TextMessage) else b"").join(
                        p if isinstance(ev, TextMessage) else bytes(p) for p in parts)
            elif isinstance(ev, CloseConnection):
                self.closed = ev.code
                raise EOFError("closed with %d" % ev.code)

    def close_code(self, timeout=10):
        """The code of the server's Close (None if the connection just ended)."""
        try:
            while True:
                ev = self.next_event(timeout)
                if isinstance(ev, CloseConnection):
                    return int(ev.code)
        except (EOFError, OSError):
            return None

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def frame(op, payload, fin=True, mask=True, rsv=0, length=None):
    """A client frame built by hand (for what wsproto refuses to send)."""
    n = len(payload) if length is None else length
    b = bytes([(0x80 if fin else 0) | (rsv << 4) | op])
    m = 0x80 if mask else 0
    if n < 126:
        b += bytes([m | n])
    elif n < 65536:
        b += bytes([m | 126]) + struct.pack(">H", n)
    else:
        b += bytes([m | 127]) + struct.pack(">Q", n)
    if mask:
        key = os.urandom(4)
        b += key
        payload = bytes(x ^ key[i % 4] for i, x in enumerate(payload))
    return b + payload


# {1 Autobahn}

def autobahn():
    if not os.access(WSTEST, os.X_OK):
        R.check("autobahn installed", False, "%s missing: run scripts/deps.sh test" % WSTEST)
        return
    srv = echo_server()
    out = tempfile.mkdtemp(prefix="httpz-autobahn-")
    R.cleanup(out)
    spec = {"outdir": os.path.join(out, "report"),
            "servers": [{"agent": "httpz", "url": "%s://127.0.0.1:%d" % (scheme(), srv.port)}],
            "cases": AUTOBAHN_CASES, "exclude-cases": [], "exclude-agent-cases": {}}
    with open(os.path.join(out, "spec.json"), "w") as f:
        json.dump(spec, f)
    env = dict(H.CLIENT_ENV, PYENV_VERSION="2.7.18", PYTHONUSERBASE=AUTOBAHN_DIR)
    t0 = time.monotonic()
    p = subprocess.run([WSTEST, "-m", "fuzzingclient", "-s", "spec.json"], cwd=out, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=80)
    H.log("# wstest took %.1f s" % (time.monotonic() - t0))
    try:
        with open(os.path.join(out, "report", "index.json")) as f:
            cases = json.load(f)["httpz"]
    except (OSError, ValueError, KeyError) as e:
        R.check("autobahn report", False, "%s; wstest said: %s" % (e, p.stdout.decode()[-2000:]))
        return
    R.check("autobahn ran cases", len(cases) > 250, len(cases))

    def key(k):
        return [int(x) for x in k.split(".")]

    for k in sorted(cases, key=key):
        v = cases[k]
        R.check("autobahn %s: %s" % (k, v["behavior"]), v["behavior"] in PASSING and
                v["behaviorClose"] in PASSING, v)
    R.check("ws_echo still serving after autobahn", srv.alive(), srv.stderr_text())


# {1 Real clients}

def echo_checks():
    srv = echo_server()
    c = Client(srv.port)
    c.send(Message(data="héllo"))
    R.check("text echoed as text", c.message() == "héllo")
    c.send(Message(data=b"\x00\xff" * 40000))
    R.check("binary echoed as binary", c.message() == b"\x00\xff" * 40000)
    c.send(Message(data="frag", message_finished=False))
    c.send(Ping(payload=b"inside"))
    c.send(Message(data="mented", message_finished=True))
    ev = c.next_event()
    R.check("ping inside a fragmented message: pong first", isinstance(ev, Pong) and ev.payload == b"inside", ev)
    R.check("fragments reassembled", c.message() == "fragmented")
    c.send(CloseConnection(code=4001, reason="bye"))
    R.check("close handshake: code echoed", c.close_code() == 4001)
    c.close()

    d = Client(srv.port, deflate=True)
    R.check("permessage-deflate negotiated", any(isinstance(e, PerMessageDeflate) for e in d.accepted.extensions),
            d.accepted.extensions)
    text = " ".join("word%d" % (i % 10) for i in range(20000))
    d.send(Message(data=text))
    R.check("compressed echo", d.message() == text)
    d.close()


def bad_input_checks():
    srv = echo_server("--max-message", str(1 << 20))
    cases = [
        ("unmasked client frame", frame(1, b"x", mask=False), 1002),
        ("reserved bits", frame(1, b"x", rsv=2), 1002),
        ("control frame over 125 bytes", frame(9, b"x" * 126), 1002),
        ("reserved opcode", frame(3, b""), 1002),
        ("invalid UTF-8", frame(1, b"ok \xc3\x28"), 1007),
        ("message over the limit", frame(2, b"", length=(1 << 20) + 1), 1009),
        ("fragments over the limit", frame(2, b"x" * 600000, fin=False) + frame(0, b"x" * 600000), 1009),
    ]
    for name, data, code in cases:
        c = Client(srv.port)
        c.raw(data)
        got = c.close_code()
        R.check("%s: close %d" % (name, code), got == code, got)
        c.close()
    # A deflate bomb: 64 MiB of zeros in ~64 KiB, against a 1 MiB limit.
    z = zlib.compressobj(9, zlib.DEFLATED, -15)
    bomb = z.compress(b"\0" * (64 << 20)) + z.flush(zlib.Z_SYNC_FLUSH)
    bomb = bomb[:-4]
    c = Client(srv.port, deflate=True)
    c.raw(frame(2, bomb, rsv=4))
    got = c.close_code()
    R.check("deflate bomb (%d bytes): close 1009" % len(bomb), got == 1009, got)
    c.close()
    # The worker stayed small through it.
    rss = H.rss_kib(srv.proc.pid)
    R.check("memory bounded after the bomb (%d KiB)" % rss, 0 < rss < 64 * 1024, rss)
    c = Client(srv.port)
    c.send(Message(data="still here"))
    R.check("serving after bad input", c.message() == "still here")
    c.close()


def slow_reader_checks():
    srv = echo_server()
    slow = Client(srv.port, rcvbuf=4096)
    slow.sock.setblocking(False)
    sent = 0
    chunk = frame(2, b"y" * 65536)
    deadline = time.monotonic() + 5
    # Echoes pile up toward a client that never reads, until its socket
    # and the server's stop taking more.
    while time.monotonic() < deadline and sent < 64 << 20:
        try:
            n = slow.sock.send(chunk)
            if n < len(chunk):
                break
            sent += n
        except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
            break
    R.check("the non-reader is held back (%d bytes sent)" % sent, sent < 64 << 20, sent)
    fast = Client(srv.port)
    t0 = time.monotonic()
    for i in range(50):
        fast.send(Message(data="m%d" % i))
        if fast.message() != "m%d" % i:
            R.check("another client is served", False, i)
            break
    else:
        R.check("another client is served while one never reads (%.2f s)" % (time.monotonic() - t0),
                time.monotonic() - t0 < 5)
    fast.close()
    slow.close()


def chat_checks():
    srv = H.Program([H.example("chat")]).start()
    status, _h, body = H.request(srv.port, "GET", "/")
    R.check("chat page", status == 200 and b"new WebSocket" in body, status)
    a = Client(srv.port, "/ws")
    b = Client(srv.port, "/ws")
    mute = Client(srv.port, "/ws", rcvbuf=4096)
    a.message()  # own join lines
    a.message()
    a.message()
    for _ in range(2):
        b.message()
    big = "z" * 60000
    got_a = got_b = 0
    try:
        # Readers read as the room talks; the mute member's queue grows
        # past its bound and it is dropped, the others do not notice.
        for i in range(40):
            a.send(Message(data="%d %s" % (i, big)))
            if b.message(timeout=10).endswith(big):
                got_b += 1
            if a.message(timeout=10).endswith(big):
                got_a += 1
    except (EOFError, OSError) as e:
        R.check("broadcast", False, e)
    R.check("broadcast reached every reader (%d, %d of 40)" % (got_a, got_b), got_a == 40 and got_b == 40)
    mute.close()
    a.close()
    b.close()


def upgrade_status(port, path="/", origin=None, fetch_site=None):
    """The status code answering a raw upgrade with these fields (Host is
    the server's own, as a browser sends it)."""
    fields = ["GET %s HTTP/1.1" % path, "Host: 127.0.0.1:%d" % port, "Upgrade: websocket",
              "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
              "Sec-WebSocket-Version: 13"]
    if origin:
        fields.append("Origin: " + origin)
    if fetch_site:
        fields.append("Sec-Fetch-Site: " + fetch_site)
    sock = H.connect(port, timeout=5)
    try:
        sock.sendall(("\r\n".join(fields) + "\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            data = sock.recv(4096)
            if not data:
                break
            head += data
        line = head.split(b"\r\n", 1)[0].split()
        return int(line[1]) if len(line) > 1 else None
    finally:
        sock.close()


def origin_checks():
    """Cross-site WebSocket hijacking: a page of another site is refused
    (403) by default; the server's own pages and non-browser clients are
    not; --allow-origin lets a listed site in."""
    srv = echo_server()
    own = "%s://127.0.0.1:%d" % (H.SCHEME, srv.port)
    for name, origin, site, want in [
            ("no Origin (not a browser)", None, None, 101),
            ("the server's own page", own, "same-origin", 101),
            ("another site", "https://evil.example", "cross-site", 403),
            ("another site, no Sec-Fetch-Site", "https://evil.example", None, 403),
            ("another port of the same host", "%s://127.0.0.1:%d" % (H.SCHEME, srv.port + 1), None, 403),
            ("Origin null", "null", None, 403),
            ("Sec-Fetch-Site: cross-site alone", None, "cross-site", 403)]:
        got = upgrade_status(srv.port, origin=origin, fetch_site=site)
        R.check("default origins, %s: %d" % (name, want), got == want, got)
    c = Client(srv.port)
    c.send(Message(data="after a refusal"))
    R.check("echo still served", c.message() == "after a refusal")
    c.close()
    srv.stop()
    srv = echo_server("--allow-origin", "https://app.example")
    for name, origin, site, want in [
            ("a listed site", "https://app.example", "cross-site", 101),
            ("the server's own page", "%s://127.0.0.1:%d" % (H.SCHEME, srv.port), "same-origin", 101),
            ("a site not listed", "https://evil.example", "cross-site", 403)]:
        got = upgrade_status(srv.port, origin=origin, fetch_site=site)
        R.check("--allow-origin, %s: %d" % (name, want), got == want, got)
    # The chat page's own script: same origin, accepted.
    chat = H.Program([H.example("chat")]).start()
    got = upgrade_status(chat.port, "/ws", origin="%s://127.0.0.1:%d" % (H.SCHEME, chat.port))
    R.check("chat: its own page connects (101)", got == 101, got)
    got = upgrade_status(chat.port, "/ws", origin="https://evil.example", fetch_site="cross-site")
    R.check("chat: another site's page is refused (403)", got == 403, got)


H.part(R, "origins: cross-site upgrades refused", origin_checks, stop_servers=True)
H.part(R, "real clients: echo, fragments, ping, close, deflate", echo_checks, stop_servers=True)
H.part(R, "bad input: close codes, deflate bomb", bad_input_checks, stop_servers=True)
H.part(R, "a client that never reads", slow_reader_checks, stop_servers=True)
H.part(R, "chat broadcast", chat_checks, stop_servers=True)
H.part(R, "autobahn subset", autobahn, stop_servers=True)
R.finish()
