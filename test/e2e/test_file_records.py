"""Files read from disk (the cache off: --cache-max-file 0) of sizes around
one TLS record (16 KiB), over HTTP/1.1 and HTTP/2, in the suite's backend
and transport.

Over TLS these are the bytes the transport reads in itself (issue 35: the
protocols do no I/O): behind the response head when both fit in a record
(HTTP/1.1), behind each DATA frame's header, in the room the session left
for it (HTTP/2), else a slice at a time; over TCP, sendfile. Checked:

1. HTTP/1.1, one connection, every size: 200 and the file's bytes (SHA-256).
2. HTTP/2 (h2 by ALPN, or h2c with prior knowledge; Python's h2), every
   size on one connection, all streams at once, then one after the other
   on the same connection: each body whole.
3. HTTP/1.1 again on a new connection.
4. Keep-alive GETs of such files (700 B, 40,000 B): 0 minor words per
   request in the steady state.

Run: python3 test/e2e/test_file_records.py   (after dune build @install)
The last line is `N passed, N failed`.
"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SYS_PY = "/usr/bin/python3"
R = H.Results("file_records")
H.suite_deadline(R, 60)
H.require_binary(R)

TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-records-"))
DOC = os.path.join(TMP, "site")
OUT = os.path.join(TMP, "out")
os.makedirs(DOC)
os.makedirs(OUT)
# Around a record: a few bytes, a head plus a file just under and over
# 16 KiB, two records, and a file of many records.
SIZES = [1, 700, 15800, 16000, 16384, 16385, 32768, 40000, 300000]
FILES = {}
for n in SIZES:
    name = "f%d.bin" % n
    data = os.urandom(n)
    with open(os.path.join(DOC, name), "wb") as f:
        f.write(data)
    FILES[name] = hashlib.sha256(data).hexdigest()


def digest(path):
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def fetch_all(port, mode, tag):
    """Every file on one connection (curl reuses it; --parallel puts the
    HTTP/2 streams in flight together)."""
    args = list(mode) + ["-w", "%{http_version} %{http_code} %{num_connects}\\n"]
    for name in FILES:
        args += ["-o", os.path.join(OUT, tag + name), H.url(port, "/" + name)]
    return H.curl(args, timeout=30)


def check_bodies(what, r, tag, version):
    lines = r.stdout.decode("latin-1").split()
    statuses = lines[1::3]
    versions = lines[0::3]
    R.check("%s: %d answers, all 200, HTTP/%s" % (what, len(FILES), version),
            statuses == ["200"] * len(FILES) and set(versions) == {version},
            (r.stdout[-300:], r.stderr[-300:]))
    bad = [name for name, want in FILES.items() if digest(os.path.join(OUT, tag + name)) != want]
    R.check("%s: every body whole (SHA-256)" % what, not bad, bad)
    connects = sum(int(x) for x in lines[2::3] if x.isdigit())
    R.check("%s: on one connection" % what, connects == 1, lines)


def http1(port):
    r = fetch_all(port, ["--http1.1"], "h1-")
    check_bodies("HTTP/1.1", r, "h1-", "1.1")


def http2(port):
    # Python's h2 (/usr/bin/python3, test/e2e/h2_client.py): curl 7.88
    # fails connection reuse with --http2-prior-knowledge (curl#10634).
    argv = [SYS_PY, os.path.join(HERE, "h2_client.py"), "files", str(port), "1" if H.TLS else "0", "0"]
    argv += ["/" + name for name in FILES]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=40)
    try:
        r = json.loads(p.stdout.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        r = {"error": (p.stdout + p.stderr).decode("latin-1")[-800:]}
    want = {"/" + name: d for name, d in FILES.items()}
    for tag, what in (("together", "every stream at once"), ("in turn", "one after the other")):
        got = r.get(tag, {})
        bad = sorted(p for p in want if got.get(p) != want[p])
        R.check("HTTP/2 on one connection, %s: every body whole (SHA-256)" % what, not bad, (bad, r.get("error")))


def no_words(srv):
    """Keep-alive GETs of files read from disk: 0 minor words per request
    (over TLS: read in behind the head, 700 B, or in slices, 40,000 B)."""
    s = H.connect(srv.port)
    rd = H.Reader(s)

    def loop(n):
        bad = 0
        for i in range(n):
            path = "/f700.bin" if i % 2 == 0 else "/f40000.bin"
            s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path).encode())
            r = rd.read_response(timeout=5)
            bad += r is None or r.status != 200 or len(r.body) != (700 if i % 2 == 0 else 40000)
        return bad

    try:
        bad = loop(1500)  # past the server's steady-state mark
        s0 = srv.stats()
        bad += loop(2000)
        s1 = srv.stats()
    finally:
        s.close()
    R.check("keep-alive file answers all whole", bad == 0, bad)
    H.check_no_words(R, "file from disk", s0, s1, 2000)


def main():
    srv = H.Server(DOC, args=["--cache-max-file", "0"] + H.STATS_ARGS, ready_path="/f1.bin").start()
    H.part(R, "HTTP/1.1", lambda: http1(srv.port))
    H.part(R, "HTTP/2", lambda: http2(srv.port))
    H.part(R, "HTTP/1.1 again", lambda: http1(srv.port))
    H.part(R, "0 words per request", lambda: no_words(srv))
    srv.stop_and_check(R)
    R.finish()


if __name__ == "__main__":
    main()
