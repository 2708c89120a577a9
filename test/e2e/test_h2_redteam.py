"""HTTP/2 holes of issue 34 (red-team round 4), against the real server, per
backend and transport (h2c with prior knowledge on plain, h2 by ALPN over
TLS). Each part failed on the code before its fix.

1. Each stream is judged by its own client: one worker, a pooled
   exchange used by 127.0.0.1 then by 127.0.0.9; `--access` denies the
   one and allows the other, in both orders, on the command line and in
   a configuration file's location; `--limit-rate` counts each client in
   its own bucket (one client over its rate does not lock another out).
2. A stream answered while the client's side is open (HEADERS without
   END_STREAM, then nothing) leaves the connection with its idle timer:
   it idles out at --idle-timeout (GOAWAY NO_ERROR), and a reload's
   retired worker exits at once rather than waiting for it.
3. At --max-connections, connections holding such streams are idle and
   evicted for a fresh client, which is answered.
4. The site is the one :authority (HTTP/2) or an absolute-form target
   (HTTP/1.1) names: a Host naming another is a malformed HTTP/2 request
   (400, RFC 9113 §8.3.1) and ignored beside an absolute-form target
   (RFC 9112 §3.2.2).
5. A request body sent a byte at a time is cut at the body timeout (the
   HTTP/1.1 minimum rate applies to DATA): a DATA frame does not restart
   the clock.
6. A first flight of 250 GETs before our SETTINGS are acknowledged: the
   excess over the stream limit is refused (REFUSED_STREAM), no GOAWAY.
7. Bodies nobody reads (POSTs to a file, 4 connections x 50 streams x
   60 kB) are not buffered: the worker's memory stays flat.
8. An aborted download's log line counts the body bytes that left, as
   over HTTP/1.1 (it said 0).
9. `server_header off` sends no Server field (it sent "Server: off"),
   over HTTP/1.1 and HTTP/2.

Run: python3 test/e2e/test_h2_redteam.py   (after dune build @install)
The last line is `N passed, N failed`.
"""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("h2-redteam")
H.suite_deadline(R, 60)
H.require_binary(R)

HERE = os.path.dirname(os.path.abspath(__file__))
SYS_PY = "/usr/bin/python3"
TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-h2rt-"))
os.chmod(TMP, 0o755)
DOC = os.path.join(TMP, "site")
H.write_file(DOC, "a.txt", b"hello over h2\n")
H.write_file(DOC, "index.html", b"index\n")
H.write_file(DOC, "private/p.txt", b"private\n")
for d, _s, _f in os.walk(DOC):
    os.chmod(d, 0o755)


def client(scenario, port, *args, timeout=30):
    argv = [SYS_PY, os.path.join(HERE, "h2_redteam_client.py"), scenario, str(port),
            "1" if H.TLS else "0"] + [str(a) for a in args]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    try:
        return json.loads(p.stdout.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": (p.stdout + p.stderr).decode("latin-1")[-800:]}


def statuses(port, src, n=1, path="/a.txt"):
    return client("statuses", port, src, n, path).get("statuses")


def access_part():
    # The readiness probe is HTTP/1.1 from 127.0.0.1; the streams below go
    # through the worker's pooled exchanges one after the other.
    srv = H.Server(DOC, args=["--access", "deny:127.0.0.9", "--access", "allow:all"]).start()
    R.check("deny 127.0.0.9: 127.0.0.1 over HTTP/2 gets 200", statuses(srv.port, "127.0.0.1", 2) == [200, 200])
    got = statuses(srv.port, "127.0.0.9", 2)
    R.check("deny 127.0.0.9: then 127.0.0.9 over HTTP/2 gets 403 (was 200)", got == [403, 403], got)
    got = statuses(srv.port, "127.0.0.1", 1)
    R.check("deny 127.0.0.9: then 127.0.0.1 again gets 200", got == [200], got)
    srv.stop()
    srv = H.Server(DOC, args=["--access", "allow:127.0.0.1", "--access", "deny:all"]).start()
    got = statuses(srv.port, "127.0.0.9", 1)
    R.check("allow 127.0.0.1 only: 127.0.0.9 over HTTP/2 gets 403", got == [403], got)
    got = statuses(srv.port, "127.0.0.1", 2)
    R.check("allow 127.0.0.1 only: then 127.0.0.1 over HTTP/2 gets 200 (was 403)", got == [200, 200], got)
    srv.stop()


def write_conf(name, sites):
    conf = os.path.join(TMP, name)
    _ca, cert, key = H.tls_files()
    with open(conf, "w") as f:
        f.write("listen 127.0.0.1:%%PORT%% %s;\nworkers 1;\n" % ("tls" if H.TLS else "plain"))
        if H.IO:
            f.write("io %s;\n" % H.IO)
        if H.TLS:
            f.write("tls_certificate %s;\ntls_certificate_key %s;\n" % (cert, key))
        f.write(sites)
    return conf


def authority_part():
    conf = write_conf("hosts.conf", "site a.test default {\n  root %s;\n}\n"
                      "site b.test {\n  root %s;\n  location / {\n    deny all;\n  }\n}\n" % (DOC, DOC))
    srv = ConfServer(conf).start()

    def h2(authority, *extra):
        return client("statuses", srv.port, "127.0.0.1", 1, "/a.txt", authority, *extra).get("statuses")

    R.check("h2: :authority a.test gets site a (200)", h2("a.test") == [200], h2("a.test"))
    R.check("h2: :authority b.test gets site b (403)", h2("b.test") == [403], h2("b.test"))
    got = h2("b.test", "host=a.test")
    R.check("h2: :authority b.test with host a.test is malformed: 400 (was site a's 200)", got == [400], got)
    got = h2("A.test", "host=a.TEST")
    R.check("h2: the same host in another case is no mismatch (200)", got == [200], got)
    got = client("statuses", srv.port, "127.0.0.1", 1, "http://b.test/a.txt", "a.test").get("statuses")
    R.check("h2: a :path in absolute form is malformed: 400 (would name site b beside :authority a)",
            got == [400], got)
    def raw(head):
        s = H.connect(srv.port)
        try:
            s.sendall(head)
            r = H.Reader(s).read_response()
            return r and r.status
        finally:
            s.close()

    st = raw(b"GET http://b.test/a.txt HTTP/1.0\r\n\r\n")
    R.check("HTTP/1.0 without Host: the absolute-form target names the site (b's 403)", st == 403, st)
    st = raw(b"GET http://b.test/a.txt HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n")
    R.check("HTTP/1.1: an absolute-form target names the site over Host (b's 403, was a's 200)", st == 403, st)
    st = raw(b"GET http://user@a.test/a.txt HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n")
    R.check("HTTP/1.1: an absolute-form target with userinfo is refused (400)", st == 400, st)
    srv.stop()


def config_part():
    conf = os.path.join(TMP, "access.conf")
    listen = "tls" if H.TLS else "plain"
    _ca, cert, key = H.tls_files()
    with open(conf, "w") as f:
        f.write("listen 127.0.0.1:%%PORT%% %s;\nworkers 1;\n" % listen)
        if H.IO:
            f.write("io %s;\n" % H.IO)
        if H.TLS:
            f.write("tls_certificate %s;\ntls_certificate_key %s;\n" % (cert, key))
        f.write("site localhost default {\n  root %s;\n  location /private/ {\n    deny 127.0.0.9;\n  }\n}\n" % DOC)
    srv = ConfServer(conf).start()
    R.check("config: 127.0.0.1 over HTTP/2 reads /private/", statuses(srv.port, "127.0.0.1", 1, "/private/p.txt") == [200])
    got = statuses(srv.port, "127.0.0.9", 1, "/private/p.txt")
    R.check("config: then 127.0.0.9 over HTTP/2 gets 403 on the denied location", got == [403], got)
    got = statuses(srv.port, "127.0.0.9", 1, "/a.txt")
    R.check("config: 127.0.0.9 still reads outside it", got == [200], got)
    srv.stop()


class ConfServer(H.Server):
    """`httpz serve --config FILE`, the file's %PORT% replaced by a free port."""

    def __init__(self, template):
        super().__init__(TMP)
        self.template = template

    @property
    def argv(self):
        path = self.template + ".run"
        with open(self.template) as f, open(path, "w") as g:
            g.write(f.read().replace("%PORT%", str(self.port)))
        return [self.binary, "serve", "--config", path]


def rate_part():
    srv = H.Server(DOC, args=["--limit-rate", "1", "--limit-burst", "2"]).start()
    got = statuses(srv.port, "127.0.0.2", 6)
    R.check("rate: 127.0.0.2 over its rate gets 429s over HTTP/2", got is not None and 429 in got, got)
    got = statuses(srv.port, "127.0.0.3", 2)
    R.check("rate: 127.0.0.3 right after has a bucket of its own (200, 200)", got == [200, 200], got)
    srv.stop()


def half_open_part():
    srv = H.Server(DOC, args=["--idle-timeout", "2"]).start()
    r = client("half_open", srv.port, 8)
    R.check("half-open stream: answered 200", r.get("status") == 200, r)
    R.check("half-open stream: the connection idles out (GOAWAY NO_ERROR, closed) within 2 s + 3",
            r.get("goaway") == 0 and r.get("closed") and r.get("after", 99) < 5.5, r)
    st, _, _ = H.request(srv.port, "GET", "/a.txt")
    R.check("half-open stream: the server still serves", st == 200, st)
    srv.stop_and_check(R, "half-open: server exits 0")


def reload_part():
    # An access log: a plain server without one has nothing to reload.
    srv = H.Server(DOC, workers=2, args=["--access-log", os.path.join(TMP, "reload.log")]).start()
    old = set(children(srv.proc.pid))
    R.check("two workers under a supervisor", len(old) == 2, old)
    held = {}
    t = threading.Thread(target=lambda: held.update(client("hold_half_open", srv.port, 3, 6)))
    t.start()
    time.sleep(1.5)
    os.kill(srv.proc.pid, signal.SIGHUP)
    gone = H.wait_until(lambda: not (old & set(children(srv.proc.pid))), 4)
    R.check("SIGHUP with half-open HTTP/2 streams held: the retired worker exits within 4 s (it stayed)", gone,
            (old, children(srv.proc.pid)))
    t.join()
    R.check("... closing those connections", held.get("closed") == 3, held)
    st, _, _ = H.request(srv.port, "GET", "/a.txt")
    R.check("... and the new worker serves", st == 200, st)
    srv.stop_and_check(R, "reload: server exits 0")


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def eviction_part():
    srv = H.Server(DOC, args=["--max-connections", "4"]).start()
    held = {}

    def hold():
        held.update(client("hold_half_open", srv.port, 4, 3))

    t = threading.Thread(target=hold)
    t.start()
    time.sleep(1.5)
    try:
        st, _, _ = H.request(srv.port, "GET", "/a.txt", timeout=3)
    except OSError as e:
        st = repr(e)
    t.join()
    R.check("max-connections 4 held by half-open HTTP/2 streams: a fresh client is answered", st == 200, st)
    R.check("... by evicting one of them", held.get("closed", 0) >= 1, held)
    srv.stop_and_check(R, "eviction: server exits 0")


def trickle_part():
    demo = H.example("async_demo")
    if not R.check("examples/async_demo.exe built", os.path.exists(demo), demo):
        return
    srv = H.Program([demo, "--body-timeout", "2"]).start()
    r = client("trickle", srv.port, 0.5, 12)
    R.check("a body trickling a byte per 0.5 s is cut near --body-timeout 2 (408 or reset), not kept alive",
            (r.get("status") == 408 or r.get("rst") is not None) and r.get("after", 99) < 5, r)
    r = client("statuses", srv.port, "127.0.0.1", 1, "/sleep?ms=10")
    R.check("... and the server still serves", r.get("statuses") == [200], r)
    srv.stop_and_check(R, "trickle: server exits 0")


def flood_part():
    srv = H.Server(DOC, args=H.STATS_ARGS).start()
    pid = srv.stats()["pid"]
    before = H.rss_kib(pid)
    conns, streams, size = 4, 50, 60000
    argv = [SYS_PY, os.path.join(HERE, "h2_redteam_client.py"), "body_flood", str(srv.port),
            "1" if H.TLS else "0", str(conns), str(streams), str(size), "3"]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = p.stdout.readline()
    time.sleep(0.5)
    during = H.rss_kib(pid)
    out, err = p.communicate(timeout=30)
    grown = (during - before) / 1024.0
    R.check("%d connections x %d streams x %d-byte bodies to a file: all sent" % (conns, streams, size),
            b"sent\": %d" % (conns * streams * size) in first, (first, err[-500:]))
    R.check("... the worker grows under 2 MiB (offered %.0f MiB; grew %.1f MiB)"
            % (conns * streams * size / 1048576.0, grown), grown < 2, (before, during))
    st, _, _ = H.request(srv.port, "GET", "/a.txt")
    R.check("... and the server still serves", st == 200, st)
    srv.stop_and_check(R, "flood: server exits 0")


def first_flight_part():
    srv = H.Server(DOC).start()
    r = client("first_flight", srv.port, 250)
    H.log("# first flight: %s" % r)
    R.check("250 GETs before SETTINGS are acknowledged: no GOAWAY (was ENHANCE_YOUR_CALM, 0 answered)",
            r.get("goaway") is None, r)
    R.check("... every one answered or refused with REFUSED_STREAM (a retry), most answered",
            r.get("answered", 0) + r.get("refused", 0) == 250 and r.get("answered", 0) >= 100, r)
    srv.stop_and_check(R, "first flight: server exits 0")


def aborted_part():
    H.write_file(DOC, "big.bin", os.urandom(1 << 20))
    log_path = os.path.join(TMP, "access.log")
    srv = H.Server(DOC, args=["--access-log", log_path]).start()
    r = client("abort_download", srv.port, "/big.bin")
    R.check("a download reset after its first window: 65,535 bytes came", r.get("received") == 65535, r)
    line = []
    H.wait_until(lambda: line.extend(l for l in open(log_path).read().splitlines() if "big.bin" in l) or line, 5)
    m = re.search(r'"GET /big.bin HTTP/2.0" 200 (\d+)', line[0]) if line else None
    sent = int(m.group(1)) if m else -1
    R.check("its log line counts the body bytes that left (65,535 to 1 MiB, was 0)", 65535 <= sent < (1 << 20), line)
    srv.stop_and_check(R, "aborted: server exits 0")


def server_header_part():
    conf = write_conf("noserver.conf", "server_header off;\nsite localhost default {\n  root %s;\n}\n" % DOC)
    srv = ConfServer(conf).start()
    st, hd, _ = H.request(srv.port, "GET", "/a.txt")
    names = [k.lower() for k, _v in hd]
    R.check("server_header off: no Server field over HTTP/1.1 (was 'Server: off')", st == 200 and "server" not in names, hd)
    mode = ["--http2"] if H.TLS else ["--http2-prior-knowledge"]
    r = H.curl(mode + ["-sS", "-D", "-", "-o", "/dev/null", H.url(srv.port, "/a.txt")])
    heads = r.stdout.decode("latin-1").lower()
    R.check("server_header off: none over HTTP/2 either", heads.startswith("http/2 200") and "\nserver:" not in heads,
            heads[:300])
    srv.stop()


def main():
    H.part(R, "each stream judged by its own client", access_part, stop_servers=True)
    H.part(R, "the same in a configuration file", config_part, stop_servers=True)
    H.part(R, "a rate bucket per client", rate_part, stop_servers=True)
    H.part(R, ":authority and absolute-form targets choose the site", authority_part, stop_servers=True)
    H.part(R, "half-open stream", half_open_part, stop_servers=True)
    H.part(R, "eviction", eviction_part, stop_servers=True)
    H.part(R, "a reload with half-open streams", reload_part, stop_servers=True)
    H.part(R, "a body trickling in", trickle_part, stop_servers=True)
    H.part(R, "a first flight of 250 requests", first_flight_part, stop_servers=True)
    H.part(R, "bodies nobody reads", flood_part, stop_servers=True)
    H.part(R, "an aborted download's log line", aborted_part, stop_servers=True)
    H.part(R, "server_header off", server_header_part, stop_servers=True)
    R.finish()


if __name__ == "__main__":
    main()
