"""HTTP/2 end to end, in the suite's backend and transport: over plain TCP
h2c with prior knowledge (the HTTP/2 preface on the HTTP/1.1 port), over
TLS h2 chosen by ALPN.

1. h2spec --strict (the conformance suite, from scripts/deps.sh): each of
   its 146 cases is one check.
2. curl --http2-prior-knowledge / --http2: HTTP/2 is used; status and body
   bytes against the file; a range (206); a 304 for If-None-Match; HEAD;
   gzip (--compress); a directory listing; HTTP/1.1 still on the same port.
3. nghttp: 100 concurrent streams on one connection; a large file whole.
4. Python h2 (/usr/bin/python3, test/e2e/h2_client.py): concurrent streams
   on one connection; a POST body read by examples/async_demo.exe;
   RST_STREAM of one stream while others go on; the defences: rapid reset
   and CONTINUATION flood (GOAWAY ENHANCE_YOUR_CALM), HPACK bomb (GOAWAY
   COMPRESSION_ERROR, the bomb stream never answered), a first frame other
   than SETTINGS (GOAWAY PROTOCOL_ERROR); other connections are served
   after each.
5. --no-http2: ALPN offers http/1.1 only, the preface gets no HTTP/2.
   A slow reader (a zero window kept so, the connection busy with PINGs)
   has its stream reset at the write timeout.
6. The async demo's sleep, stream and offload routes, a graceful stop
   (SIGTERM) while a stream waits, and the Lwt demo, over HTTP/2.
7. Steady-state GC: on one connection, 10 concurrent streams at a time,
   5000 200s and 5000 304s of a small file past the warm-up; the stats'
   minor_words delta of each run is 0, the shutdown log says 0 words per
   request.

Run: python3 test/e2e/test_h2.py   (after dune build @install)
The last line is `N passed, N failed`.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("h2")
H.suite_deadline(R, 90)
H.require_binary(R)

HERE = os.path.dirname(os.path.abspath(__file__))
SYS_PY = "/usr/bin/python3"
TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-h2-"))
DOC = os.path.join(TMP, "site")
os.makedirs(os.path.join(DOC, "dir"))
SMALL = b"hello over h2\n"
BIG = os.urandom(3 * 1024 * 1024 + 123)
TEXT = b"".join(b"line %d of a compressible text file\n" % i for i in range(400))
for name, data in (("a.txt", SMALL), ("big.bin", BIG), ("text.txt", TEXT), ("dir/x.txt", b"x\n")):
    with open(os.path.join(DOC, name), "wb") as f:
        f.write(data)
# h2_client.py's scenarios fetch these names.
shutil.copy(os.path.join(DOC, "big.bin"), os.path.join(DOC, "big2.bin"))


def h2spec_binary():
    tools = os.environ.get("HTTPZ_TOOLS") or os.path.join(os.path.expanduser("~"), ".local", "httpz-tools")
    for p in (os.path.join(tools, "bin", "h2spec"), shutil.which("h2spec") or ""):
        if p and os.access(p, os.X_OK):
            return p
    return None


def curl_h2(args):
    mode = ["--http2"] if H.TLS else ["--http2-prior-knowledge"]
    return H.curl(mode + args)


def h2client(scenario, port, arg=None, *more):
    argv = [SYS_PY, os.path.join(HERE, "h2_client.py"), scenario, str(port), "1" if H.TLS else "0"]
    if arg is not None:
        argv.append(str(arg))
    argv += [str(m) for m in more]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    try:
        return json.loads(p.stdout.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": (p.stdout + p.stderr).decode("latin-1")[-800:]}


def still_served(port, what):
    r = curl_h2(["-o", "-", H.url(port, "/a.txt")])
    R.check("after %s: another connection is served" % what, r.returncode == 0 and r.stdout == SMALL,
            r.stderr[-300:])


# {1 h2spec}

def h2spec(srv):
    binary = h2spec_binary()
    if not R.check("h2spec installed (scripts/deps.sh)", binary is not None, "no h2spec in ~/.local/httpz-tools/bin"):
        return
    report = os.path.join(TMP, "h2spec.xml")
    argv = [binary, "--strict", "-h", H.HOST, "-p", str(srv.port), "-o", "3", "-j", report]
    if H.TLS:
        argv += ["-t", "-k"]
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    except subprocess.TimeoutExpired:
        R.check("h2spec finishes within 60 s", False, "timeout")
        return
    cases = []
    try:
        for tc in ET.parse(report).getroot().iter("testcase"):
            failed = tc.find("failure") is not None or tc.find("error") is not None
            skipped = tc.find("skipped") is not None
            cases.append((tc.get("package", "") + " " + tc.get("name", ""), failed, skipped, tc))
    except (ET.ParseError, OSError) as e:
        R.check("h2spec report readable", False, "%s\n%s" % (e, p.stdout.decode("latin-1")[-2000:]))
        return
    for name, failed, skipped, tc in cases:
        detail = ET.tostring(tc, encoding="unicode")[:600] if failed else ""
        R.check("h2spec %s" % name, not failed and not skipped, detail)
    R.check("h2spec ran all 146 cases (%d)" % len(cases), len(cases) == 146, p.stdout.decode("latin-1")[-500:])


# {1 curl}

def curl_checks(port):
    r = curl_h2(["-o", "-", "-w", "%{http_version} %{http_code}", H.url(port, "/a.txt")])
    out = r.stdout
    R.check("curl: HTTP/2, 200, the file's bytes", out == SMALL + b"2 200", (out[-100:], r.stderr[-300:]))

    big = os.path.join(TMP, "big.out")
    r = curl_h2(["-o", big, "-w", "%{http_version} %{http_code}", H.url(port, "/big.bin")])
    with open(big, "rb") as f:
        got = f.read()
    R.check("curl: a 3 MiB file whole over HTTP/2", r.stdout == b"2 200" and got == BIG,
            (r.stdout, len(got), r.stderr[-300:]))

    r = curl_h2(["-D", "-", "-o", os.path.join(TMP, "range.out"), "-r", "100-199", H.url(port, "/big.bin")])
    heads = H.parse_curl_heads(r.stdout)
    with open(os.path.join(TMP, "range.out"), "rb") as f:
        got = f.read()
    R.check("curl: a range answers 206 with those bytes",
            heads and heads[-1][0] == 206 and got == BIG[100:200]
            and heads[-1][1].get("content-range") == "bytes 100-199/%d" % len(BIG), (heads, len(got)))

    r = curl_h2(["-D", "-", "-o", "/dev/null", H.url(port, "/a.txt")])
    heads = H.parse_curl_heads(r.stdout)
    etag = heads[-1][1].get("etag") if heads else None
    R.check("curl: the response carries an ETag, no Connection field",
            etag is not None and "connection" not in heads[-1][1], heads)
    if etag:
        r = curl_h2(["-D", "-", "-o", "/dev/null", "-H", "If-None-Match: " + etag, H.url(port, "/a.txt")])
        heads = H.parse_curl_heads(r.stdout)
        R.check("curl: If-None-Match answers 304", heads and heads[-1][0] == 304, heads)

    r = curl_h2(["-I", H.url(port, "/big.bin")])
    heads = H.parse_curl_heads(r.stdout)
    R.check("curl: HEAD has the GET's Content-Length and no body",
            heads and heads[-1][0] == 200 and heads[-1][1].get("content-length") == str(len(BIG)), heads)

    r = curl_h2(["-D", "-", "-o", os.path.join(TMP, "gz.out"), "--compressed", H.url(port, "/text.txt")])
    heads = H.parse_curl_heads(r.stdout)
    with open(os.path.join(TMP, "gz.out"), "rb") as f:
        got = f.read()
    R.check("curl: gzip (--compress) decodes to the file",
            heads and heads[-1][1].get("content-encoding") == "gzip" and got == TEXT, (heads, len(got)))

    r = curl_h2(["-o", "-", H.url(port, "/dir/")])
    R.check("curl: a directory listing", b"x.txt" in r.stdout, r.stdout[:300])

    r = curl_h2(["-o", "-", "-w", "%{http_code}", H.url(port, "/missing")])
    R.check("curl: 404 for a missing file", r.stdout.endswith(b"404"), r.stdout[-100:])

    r = H.curl(["--http1.1", "-o", "-", "-w", " %{http_version}", H.url(port, "/a.txt")])
    R.check("curl --http1.1 on the same port: HTTP/1.1", r.stdout == SMALL + b" 1.1", r.stdout)


# {1 nghttp}

def nghttp_checks(port):
    if not R.check("nghttp installed", shutil.which("nghttp") is not None, "apt-get install nghttp2-client"):
        return
    p = subprocess.run(["nghttp", "-ns", "-m", "100", H.url(port, "/a.txt")], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=30)
    lines = [l for l in p.stdout.decode("latin-1").splitlines() if l.strip().endswith("/a.txt")]
    ok = [l for l in lines if " 200 " in l]
    R.check("nghttp: 100 concurrent streams on one connection, all 200", len(ok) == 100,
            p.stdout.decode("latin-1")[-600:])
    p = subprocess.run(["nghttp", H.url(port, "/big2.bin")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=30)
    R.check("nghttp: a 3 MiB file whole", p.stdout == BIG, (len(p.stdout), p.stderr[-300:]))


# {1 Python h2}

def python_checks(port):
    r = h2client("concurrent", port, 40)
    R.check("h2: 40 concurrent streams on one connection end, 200, right lengths",
            r.get("ended") == 40 and r.get("statuses") == ["200"] and r.get("lengths") == sorted({len(SMALL), len(TEXT)}),
            r)
    r = h2client("mixed", port, 24)
    want = {"/big.bin": [hashlib.sha256(BIG).hexdigest()], "/text.txt": [hashlib.sha256(TEXT).hexdigest()],
            "/a.txt": [hashlib.sha256(SMALL).hexdigest()]}
    R.check("h2: 24 streams of three files at once, read slowly then fast: every body whole (SHA-256)",
            r.get("ended") == 24 and r.get("digests") == want, r)
    r = h2client("mixed", port, 6, 4096)
    R.check("h2: 6 such streams to a client with a 4 KiB receive buffer (writes meet a full socket): every body whole",
            r.get("ended") == 6 and r.get("digests") == want, r)
    r = h2client("reset_one", port)
    R.check("h2: RST_STREAM of a stalled stream, the others go on",
            r.get("small") == SMALL.decode() and r.get("after") == SMALL.decode() and r.get("goaway") is None
            and r.get("big_ended") is False, r)
    r = h2client("rapid_reset", port)
    R.check("h2: rapid reset gets GOAWAY ENHANCE_YOUR_CALM", r.get("goaway") == 11, r)
    still_served(port, "rapid reset")
    r = h2client("continuation_flood", port)
    R.check("h2: CONTINUATION flood gets GOAWAY ENHANCE_YOUR_CALM", r.get("goaway") == 11, r)
    still_served(port, "a CONTINUATION flood")
    r = h2client("hpack_bomb", port)
    R.check("h2: HPACK bomb gets GOAWAY COMPRESSION_ERROR, never an answer",
            r.get("goaway") == 9 and r.get("stream3_answered") is False and r.get("stream1_answered") is True, r)
    still_served(port, "an HPACK bomb")
    r = h2client("first_not_settings", port)
    R.check("h2: a first frame other than SETTINGS gets GOAWAY PROTOCOL_ERROR", r.get("goaway") == 1, r)
    still_served(port, "a first frame other than SETTINGS")


# {1 The async demo}

def async_checks():
    demo = H.example("async_demo")
    if not R.check("examples/async_demo.exe built", os.path.exists(demo), demo):
        return
    srv = H.Program([demo]).start()
    r = h2client("post", srv.port, 300 * 1024)
    R.check("h2: a POST body read by the handler (/count)", r.get("status") == "200"
            and r.get("body", "").strip() == r.get("want"), r)
    r = curl_h2(["-o", "-", "-w", " %{http_code}", H.url(srv.port, "/sleep?ms=200")])
    R.check("curl: /sleep over HTTP/2", r.stdout == b"slept 200\n 200", r.stdout)
    r = curl_h2(["-o", "-", H.url(srv.port, "/stream?n=3&ms=100")])
    R.check("curl: /stream pieces over HTTP/2", r.stdout == b"chunk 1\nchunk 2\nchunk 3\n", r.stdout)
    r = curl_h2(["-o", "-", H.url(srv.port, "/offload?ms=100")])
    R.check("curl: /offload over HTTP/2", r.stdout.startswith(b"offloaded"), r.stdout)
    # Graceful stop: SIGTERM while a stream waits; GOAWAY, the stream
    # finishes, the server exits.
    mode = ["--http2"] if H.TLS else ["--http2-prior-knowledge"]
    tls = ["--cacert", H.tls_files()[0]] if H.TLS else []
    p = subprocess.Popen(["curl", "-sS", "--noproxy", "*", "--max-time", "10"] + tls + mode
                         + [H.url(srv.port, "/sleep?ms=1000")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=H.CLIENT_ENV)
    time.sleep(0.4)
    code = srv.stop(grace=8)
    out, err = p.communicate(timeout=10)
    R.check("SIGTERM: the open stream finishes", out == b"slept 1000\n", (out, err[-300:]))
    R.check("SIGTERM: the server exits 0 once it did", code == 0, code)


def lwt_checks():
    demo = H.example("lwt_demo")
    if not R.check("examples/lwt_demo.exe built", os.path.exists(demo), demo):
        return
    fname = os.path.join(TMP, "lwt.txt")
    with open(fname, "wb") as f:
        f.write(b"read by Lwt_io\n" * 100)
    srv = H.Program([demo, "-f", fname], ready_path="/file").start()
    r = curl_h2(["-o", "-", "-w", " %{http_version}", H.url(srv.port, "/sleep")])
    R.check("lwt_demo: /sleep over HTTP/2", r.stdout == b"slept 200 ms\n 2", r.stdout)
    r = curl_h2(["-o", "-", H.url(srv.port, "/file")])
    R.check("lwt_demo: /file over HTTP/2", r.stdout == b"read by Lwt_io\n" * 100, r.stdout[:100])
    srv.stop()


def json_log():
    path = os.path.join(TMP, "json.log")
    srv = H.Server(DOC, args=["--access-log", path, "--log-format", "json"]).start()
    r = curl_h2(["-o", "/dev/null", "-w", "%{http_version}", H.url(srv.port, "/a.txt")])
    srv.stop()
    with open(path) as f:
        objs = [json.loads(l) for l in f if "/a.txt" in l]
    o = objs[-1] if objs else {}
    R.check("json log: an HTTP/2 request's protocol, status and TLS version",
            r.stdout == b"2" and o.get("protocol") == "HTTP/2.0" and o.get("status") == 200
            and o.get("tls") == ("TLSv1.3" if H.TLS else None), o)


def slow_reader():
    srv = H.Server(DOC, args=["--write-timeout", "1"]).start()
    r = h2client("zero_window", srv.port)
    R.check("h2: a zero window that never opens is reset (CANCEL) at the write timeout, PINGs or not",
            r.get("reset") == 8 and 0.8 <= r.get("after", 0) <= 3.0, r)
    still_served(srv.port, "a slow reader")
    srv.stop()


# {1 Steady state}

GC_N = 5000


def gc_steady_state():
    """Issue 22's 0 words per request on the static path over h2: one
    connection, batches of 10 concurrent streams, 1500 200s and 1500 304s
    to pass the server's steady-state mark (1000 requests,
    Loop_state.warmup), then GC_N of each between stats."""
    srv = H.Server(DOC, args=H.STATS_ARGS, ready_path="/a.txt").start()
    r = h2client("steady_state", srv.port, GC_N, H.STATS_TOKEN)
    H.log("# h2 steady state: %r" % ({k: v for k, v in r.items() if k != "stats"},))
    R.check("h2 steady state: ran (one connection, no GOAWAY)", "stats" in r and r.get("goaway") is None, r)
    R.check("h2 steady state: every 200 has the file's bytes, every 304 none",
            r.get("body") == SMALL.decode() and r.get("bad") == [], r.get("bad"))
    if "stats" in r:
        s0, s1, s2 = r["stats"]
        H.check_no_words(R, "h2 200", s0, s1, GC_N)
        H.check_no_words(R, "h2 304", s1, s2, GC_N)
    srv.stop_and_check(R, "h2 steady state: server exits 0 on SIGTERM")
    H.check_shutdown_words(R, srv, 1 + 3000 + 2 * GC_N)


def no_http2():
    srv = H.Server(DOC, args=["--no-http2"]).start()
    r = curl_h2(["-o", "-", "-w", " %{http_version}", H.url(srv.port, "/a.txt")])
    if H.TLS:
        R.check("--no-http2: ALPN settles on HTTP/1.1", r.stdout == SMALL + b" 1.1", (r.stdout, r.stderr[-200:]))
    else:
        R.check("--no-http2: the h2c preface is not served", r.returncode != 0 or b" 2" not in r.stdout,
                (r.stdout, r.stderr[-200:]))
    R.check("--no-http2: server exits 0", srv.stop() == 0)


base_fds = [0]


def no_leaks(srv, base):
    """Once every client left: one connection (the stats request's own) and
    the buffers it holds, as before the HTTP/2 traffic."""
    def settled():
        st = srv.stats()
        return st if st["connections"] == 1 and st["buffer_bytes"] == base["buffer_bytes"] else None
    st = H.wait_until(settled, 5.0, step=0.2) or srv.stats()
    R.check("after the HTTP/2 clients left: no connection, no buffer held",
            st["connections"] == 1 and st["buffer_bytes"] == base["buffer_bytes"], (base, st))
    fds = lambda: len(os.listdir("/proc/%d/fd" % st["pid"]))
    R.check("after the HTTP/2 clients left: no descriptor (files served) left open",
            H.wait_until(lambda: fds() <= base_fds[0], 3.0), (base_fds, fds()))


def access_log_checks(path):
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        R.check("access log written", False, e)
        return
    h2 = [l for l in lines if '"GET /a.txt HTTP/2.0" 200 ' in l]
    R.check("access log: HTTP/2 requests logged as HTTP/2.0 (%d lines)" % len(h2), len(h2) >= 3, lines[:5])
    R.check("access log: the HTTP/1.1 request as HTTP/1.1",
            any('"GET /a.txt HTTP/1.1" 200 ' in l for l in lines), lines[:5])
    R.check("access log: a range's bytes", any('"GET /big.bin HTTP/2.0" 206 100 ' in l for l in lines),
            [l for l in lines if "big.bin" in l][:5])


def main():
    log_path = os.path.join(TMP, "access.log")
    srv = H.Server(DOC, args=["--list", "--compress", "--access-log", log_path] + H.STATS_ARGS).start()
    base = srv.stats()
    base_fds[0] = len(os.listdir("/proc/%d/fd" % base["pid"]))
    H.part(R, "h2spec", lambda: h2spec(srv))
    H.part(R, "curl", lambda: curl_checks(srv.port))
    H.part(R, "nghttp", lambda: nghttp_checks(srv.port))
    H.part(R, "python h2", lambda: python_checks(srv.port))
    H.part(R, "nothing leaks", lambda: no_leaks(srv, base))
    H.part(R, "async demo", async_checks)
    H.part(R, "lwt demo", lwt_checks)
    srv.stop_and_check(R)
    access_log_checks(log_path)
    H.part(R, "json log", json_log, stop_servers=True)
    H.part(R, "slow reader", slow_reader, stop_servers=True)
    H.part(R, "--no-http2", no_http2, stop_servers=True)
    H.part(R, "steady-state GC over HTTP/2", gc_steady_state, stop_servers=True)
    R.finish()


if __name__ == "__main__":
    main()
