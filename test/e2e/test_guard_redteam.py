"""Red-team round 4 (issue 34) against the guard, per backend and transport.

1. Request rate with colliding addresses: 9 addresses of 127/8 that the
   rate table's old unkeyed hash put on one entry (computed here, as an
   attacker would) and 40 other addresses all ask at once, over keep-alive
   connections, at 1 r/s with a burst of 1: no client gets more than its
   rate (before: the colliders evicted each other, each came back with a
   fresh burst, and 180 of 180 of their requests passed). Refusals are
   429 with Retry-After.
2. Connections with colliding addresses: 16 addresses that the old hash
   put on one neighbourhood of the connection table hold a connection
   each; a 17th is still held to --limit-conn 2 (before: it was let in
   uncounted, any number of times).
3. The stats token's scheme in any case (bearer, BEARER): RFC 9110 11.1.
4. A user file of htpasswd's default Apache MD5 ($apr1$, made now by
   openssl passwd -apr1) and MD5-crypt ($1$) hashes is accepted; the
   Basic scheme in any case; a 401 carries WWW-Authenticate.

Run: python3 test/e2e/test_guard_redteam.py   (needs _build/install/default/bin/httpz)
"""

import base64
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("guard_redteam")
H.suite_deadline(R, 100)
H.require_binary(R)

TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-guard-redteam-"))
os.chmod(TMP, 0o755)
DOC = os.path.join(TMP, "root")
H.write_file(DOC, "index.html", b"public\n")
H.write_file(DOC, "admin/index.html", b"admin\n")
for d, _subdirs, _files in os.walk(DOC):
    os.chmod(d, 0o755)


# The hash the tables used before issue 34 (server/client_key.ml), on
# OCaml's 63-bit ints: unkeyed, so anyone could compute it.
M63 = (1 << 63) - 1


def unkeyed_hash(a, b, c):
    h = ((a * 0x9E3779B1) ^ (b * 0x85EBCA77) ^ (c * 0xC2B2AE3D)) & M63
    return (h ^ (h >> 29)) & ((1 << 62) - 1)


def v4_key(addr):
    """The key words of an IPv4 client: high, middle, low (words read
    little-endian from the 16 bytes ::ffff:a.b.c.d, the low one tagged)."""
    o = socket.inet_aton(addr)
    return 0, 0, int.from_bytes(o, "little") | (1 << 40)


def colliding(n, mask, start=2):
    """[n] addresses of 127/8 whose keys the old hash put on one entry of a
    table of [mask + 1] entries."""
    def addr(x):
        return "127.%d.%d.%d" % ((x >> 16) & 255, (x >> 8) & 255, x & 255)
    target = unkeyed_hash(*v4_key(addr(start))) & mask
    found, x = [addr(start)], start + 1
    while len(found) < n:
        if unkeyed_hash(*v4_key(addr(x))) & mask == target:
            found.append(addr(x))
        x += 1
    return found


def connect_from(src, port, timeout=5.0):
    return H.connect(port, timeout=timeout, src=src)


get = H.send_get


def rate_part():
    rate, burst, rounds, pause = 1, 1, 20, 0.1
    srv = H.Server(DOC, args=["--limit-rate", str(rate), "--limit-burst", str(burst)]).start()
    # Guard.create's table: 16384 entries.
    colliders = colliding(9, 16383)
    others = ["127.0.%d.%d" % (200 + i // 200, 2 + i % 200) for i in range(40)]
    clients = colliders + others
    socks = {a: connect_from(a, srv.port) for a in clients}
    readers = {a: H.Reader(s) for a, s in socks.items()}
    ok = {a: 0 for a in clients}
    other = {}
    retry = set()
    t0 = time.monotonic()
    for _ in range(rounds):
        for a in clients:
            get(socks[a], "/")
        for a in clients:
            r = readers[a].read_response()
            if r is not None and r.status == 200:
                ok[a] += 1
            elif r is not None and r.status == 429:
                retry.add(r.header("Retry-After"))
            else:
                other[a] = r and r.status
        time.sleep(pause)
    elapsed = time.monotonic() - t0
    for s in socks.values():
        s.close()
    most = burst + int(rate * elapsed) + 1  # one more for the clock's edges
    passed = sum(ok[a] for a in colliders)
    H.log("# colliders: %d of %d passed in %.1f s; others: %d of %d"
          % (passed, rounds * len(colliders), elapsed, sum(ok[a] for a in others), rounds * len(others)))
    over = {a: n for a, n in ok.items() if n > most}
    R.check("9 colliding addresses: %d of %d passed (at most %d each)" % (passed, rounds * 9, most),
            not any(a in over for a in colliders), over)
    R.check("40 more addresses at the same time: none over its rate", not any(a in over for a in others), over)
    R.check("every client got its first request", all(n >= 1 for n in ok.values()), ok)
    R.check("refusals are 429 with Retry-After", not other and retry and all(x and int(x) >= 1 for x in retry),
            (other, retry))
    srv.stop_and_check(R, "rate: server exits 0")


def served(src, port):
    """A connection from [src] and whether its request was answered (the
    connection is returned open when it was)."""
    try:
        s = connect_from(src, port, timeout=3)
        get(s, "/")
        r = H.Reader(s).read_response(timeout=3)
        if r is not None and r.status == 200:
            return s
        s.close()
    except (OSError, H.ProtocolError):
        pass
    return None


def conn_part():
    # 64 connections + 64 spare slots: a table of 512 entries.
    srv = H.Server(DOC, args=["--limit-conn", "2", "--max-connections", "64"]).start()
    addrs = colliding(17, 511)
    held = []
    for a in addrs[:16]:
        s = served(a, srv.port)
        R.check("%s: served" % a, s is not None)
        if s:
            held.append(s)
    extra = []
    for _ in range(10):
        s = served(addrs[16], srv.port)
        if s:
            extra.append(s)
    H.log("# the 17th colliding address: %d of 10 connections served at --limit-conn 2" % len(extra))
    R.check("the 17th colliding address: 2 of 10 connections served", len(extra) == 2, len(extra))
    for s in held + extra:
        s.close()
    srv.stop_and_check(R, "conn: server exits 0")


def stats_part():
    srv = H.Server(DOC, args=["--stats-token", "T0ken-x"]).start()
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"]:
        st, _, body = H.request(srv.port, "GET", "/__httpz/stats", headers={"Authorization": scheme + " T0ken-x"})
        R.check("%s: the stats" % scheme, st == 200 and body.startswith(b"{"), (st, body[:80]))
    for auth in ["Bearer t0ken-x", "Bearer T0ken-", "Basic T0ken-x"]:
        st, _, _ = H.request(srv.port, "GET", "/__httpz/stats", headers={"Authorization": auth})
        R.check("%s: not the stats (404 from the site)" % auth, st == 404, st)
    srv.stop_and_check(R, "stats: server exits 0")


def openssl_passwd(flag, password):
    return subprocess.run(["openssl", "passwd", flag, password], stdout=subprocess.PIPE,
                          check=True).stdout.decode().strip()


def basic(scheme, user, password):
    return scheme + " " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()


def apr1_part():
    users = os.path.join(TMP, "users")
    with open(users, "w") as f:
        f.write("alice:%s\n" % openssl_passwd("-apr1", "wonderland"))
        f.write("bob:%s\n" % openssl_passwd("-1", "builder"))
    os.chmod(users, 0o644)
    srv = H.Server(DOC, args=["--auth-file", users, "--auth-realm", "Staff", "--auth-prefix", "/admin"]).start()
    st, hd, _ = H.request(srv.port, "GET", "/admin/")
    www = dict((k.lower(), v) for k, v in hd).get("www-authenticate")
    R.check("no credentials: 401 with WWW-Authenticate", st == 401 and www == 'Basic realm="Staff", charset="UTF-8"',
            (st, hd))
    for scheme, user, pw, want in [("Basic", "alice", "wonderland", 200), ("basic", "alice", "wonderland", 200),
                                   ("BASIC", "bob", "builder", 200), ("Basic", "alice", "Wonderland", 401),
                                   ("Basic", "bob", "builder ", 401)]:
        st, _, body = H.request(srv.port, "GET", "/admin/", headers={"Authorization": basic(scheme, user, pw)})
        R.check("%s %s:%s -> %d" % (scheme, user, pw, want), st == want, (st, body[:60]))
    srv.stop_and_check(R, "apr1: server exits 0")


H.part(R, "request rate, colliding addresses", rate_part, stop_servers=True)
H.part(R, "connections, colliding addresses", conn_part, stop_servers=True)
H.part(R, "stats token scheme", stats_part, stop_servers=True)
H.part(R, "Apache MD5 user file", apr1_part, stop_servers=True)
R.finish()
