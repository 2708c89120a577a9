#!/usr/bin/env python3
"""The configuration file (`httpz serve --config`, `httpz check`), end to end,
in the suite's backend (HTTPZ_IO) and transport (HTTPZ_TRANSPORT):

1. `httpz check`: the example file (with throwaway certificates) exits 0 with one
   summary line; malformed files exit 2 with one FILE:LINE:COL line each; other
   options beside `serve --config` are refused.
2. Virtual hosts: sites by exact name, wildcard and default, over the transport;
   curl --resolve as a browser would ask; an unknown host gets the default site, or
   421 with `unknown_host 421`.
3. SNI (tls): each site's certificate, picked by the name the client sends and
   verified against the test CA (Python ssl and openssl s_client); no name or an
   unknown one gets the default certificate. Plain: the same sites are picked by
   Host alone, and a site certificate without a tls listener is refused.
4. Per-path rules: Cache-Control by prefix and exact path, try_files (SPA), internal,
   return (redirect, text), rewrite, listing on/off, compress on/off.
5. Reload: SIGHUP re-reads the file under client load (a new site appears, no
   request lost), an invalid file or a listen change changes nothing, and 10
   reloads leave the supervisor's descriptors as they were.
6. Access control and logs from the file: 403 (allow/deny), 401 (auth_basic with a
   user file), 429 (limit_req) per site and per location with nginx's inheritance
   (auth_basic off, a location's address rules replacing the site's); a reload reads
   a changed user file again; the JSON access log's host, scheme, tls and protocol;
   vhost_combined; the error log; limit_conn.
"""

import base64
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("config")
H.suite_deadline(R, 55)
H.require_binary(R)
TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-config-"))


def write(path, text, mode="w"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(text)


# Two sites: a (a.test, *.a.test) with rules, b (b.test) the default.
A, B, C = (os.path.join(TMP, n) for n in ("a", "b", "c"))
write(os.path.join(A, "index.html"), "site a\n")
write(os.path.join(A, "assets", "app.css"), "body { color: red; }\n" * 40)
write(os.path.join(A, "assets", "plain.css"), "body { color: red; }\n" * 40)
write(os.path.join(A, "errors", "404.html"), "custom 404\n")
write(os.path.join(A, "pub", "x.txt"), "x\n")
write(os.path.join(A, "priv", "y.txt"), "y\n")
write(os.path.join(B, "index.html"), "site b\n")
write(os.path.join(C, "index.html"), "site c\n")

# Over TLS: the test CA signs a certificate per site; the default is the
# suite's localhost certificate.
CA = CERTS = None
if H.TLS:
    ca_cert, srv_cert, srv_key = H.tls_files()
    ca_key = ca_cert[:-len(".pem")] + ".key"
    d = os.path.join(TMP, "certs")
    os.mkdir(d)
    CERTS = {
        "default": (srv_cert, srv_key),
        "a": H.make_cert(d, "a", ca=(ca_cert, ca_key), sans="DNS:a.test,DNS:*.a.test"),
        "b": H.make_cert(d, "b", ca=(ca_cert, ca_key), sans="DNS:b.test"),
    }
    CA = ca_cert


def site_cert(name):
    if not H.TLS:
        return ""
    c, k = CERTS[name]
    return "  tls_certificate %s;\n  tls_certificate_key %s;\n" % (c, k)


def conf(port, extra_sites="", top=""):
    listen = "listen 127.0.0.1:%d%s;\n" % (port, " tls" if H.TLS else "")
    tls = ("tls_certificate %s;\ntls_certificate_key %s;\n" % CERTS["default"]) if H.TLS else ""
    io = ("io %s;\n" % H.IO) if H.IO else ""
    return (listen + tls + io + "workers 2;\ngrace 3s;\n" + top +
            "site a.test *.a.test {\n  root %s;\n%s" % (A, site_cert("a")) +
            "  error_page 404 /errors/404.html;\n"
            "  location /assets/ { header Cache-Control \"public, max-age=31536000, immutable\"; compress on; }\n"
            "  location = /index.html { header Cache-Control no-cache; }\n"
            "  location /app/ { try_files $uri $uri/ /index.html; }\n"
            "  location /errors/ { internal; }\n"
            "  location /old/ { return 301 https://a.test/new/; }\n"
            "  location = /gone { return 410 \"gone for good\"; }\n"
            "  location /styles/ { rewrite /assets/; }\n"
            "  location /pub/ { listing on; }\n"
            "}\n"
            "site b.test default {\n  root %s;\n%s}\n" % (B, site_cert("b")) + extra_sites)


class ConfigServer(H.Server):
    """`httpz serve --config FILE`, the file written for the port chosen."""

    def __init__(self, make_conf, **kw):
        super().__init__(docroot=None, **kw)
        self.make_conf = make_conf
        self.conf_path = os.path.join(TMP, "httpz-%d.conf" % id(self))

    def write_conf(self, text=None):
        write(self.conf_path, text if text is not None else self.make_conf(self.port))

    @property
    def argv(self):
        self.write_conf()
        return [self.binary, "serve", "--config", self.conf_path]


def get(port, path, host, headers=None, timeout=5.0):
    h = {"Host": host}
    h.update(headers or {})
    st, hd, body = H.request(port, "GET", path, headers=h, timeout=timeout)
    return st, {k.lower(): v for k, v in hd}, body


def run(args, timeout=10):
    return subprocess.run([H.BIN] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)


# ----------------------------------------------------------------------------

def check_command():
    ex = os.path.join(TMP, "examples")
    shutil.copytree(os.path.join(H.ROOT, "examples"), ex, ignore=shutil.ignore_patterns("certs", "*.exe"))
    subprocess.run(["sh", os.path.join(ex, "make-example-certs.sh")], check=True, stdout=subprocess.DEVNULL)
    p = run(["check", "--config", os.path.join(ex, "httpz.conf")])
    out = p.stdout.decode()
    R.check("check: the example exits 0 (%d)" % p.returncode, p.returncode == 0, p.stderr.decode())
    R.check("... with one summary line", out.count("\n") == 1 and ": ok: 2 sites" in out, out)
    cases = [
        ("root %s;\nwokrers 2;\n" % A, "2:1: unknown directive 'wokrers'; did you mean 'workers'?"),
        ("root %s;\nsite a { root %s }\n" % (A, A), "2:%d: missing ';' before '}'" % (16 + len(A))),
        ("root %s;\nlisten 8443 tls;\n" % A, "2:1: 'listen … tls' needs tls_certificate"),
        ("site a { root %s/nope; }\n" % A, "1:15: %s/nope: no such directory" % A),
    ]
    for i, (text, want) in enumerate(cases):
        path = os.path.join(TMP, "bad%d.conf" % i)
        write(path, text)
        p = run(["check", "--config", path])
        err = p.stderr.decode()
        R.check("check: exit 2 and %r" % want,
                p.returncode == 2 and err.startswith("%s:%s" % (path, want)) and err.count("\n") == 1,
                (p.returncode, err, p.stdout))
    p = run(["serve", "--config", os.path.join(TMP, "bad0.conf"), "--workers", "3"])
    R.check("serve --config with another option: exit 2, refused",
            p.returncode == 2 and "--workers cannot be combined with --config" in p.stderr.decode(),
            (p.returncode, p.stderr))


def vhosts():
    srv = ConfigServer(conf, ready_path="/").start()
    try:
        for host, want in [("a.test", b"site a\n"), ("A.TEST:%d" % srv.port, b"site a\n"),
                           ("www.a.test", b"site a\n"), ("deep.www.a.test", b"site a\n"),
                           ("b.test", b"site b\n"), ("unknown.test", b"site b\n"), ("127.0.0.1", b"site b\n")]:
            st, _, body = get(srv.port, "/", host)
            R.check("Host %s: %r" % (host, want), st == 200 and body == want, (st, body))
        # As a browser asks: the name in the URL (and over TLS, as the SNI name).
        for name, want in [("a.test", b"site a\n"), ("b.test", b"site b\n")]:
            p = H.curl(["--resolve", "%s:%d:127.0.0.1" % (name, srv.port),
                        "%s://%s:%d/" % (H.SCHEME, name, srv.port)])
            R.check("curl --resolve %s: %r" % (name, want), p.returncode == 0 and p.stdout == want,
                    (p.returncode, p.stdout, p.stderr))
    finally:
        srv.stop_and_check(R, "vhosts: exits 0")
    srv = ConfigServer(lambda port: conf(port, top="unknown_host 421;\n")).start()
    try:
        st, _, body = get(srv.port, "/", "unknown.test")
        R.check("unknown_host 421: an unknown host gets 421 (%s)" % st, st == 421, body)
        st, _, body = get(srv.port, "/", "b.test")
        R.check("... a known one its site", st == 200 and body == b"site b\n", (st, body))
    finally:
        srv.stop_and_check(R, "unknown_host 421: exits 0")


def peer_names(port, server_name):
    """The DNS names of the certificate the server presents for [server_name]
    (None: no SNI), verified against the test CA; None when it does not verify."""
    ctx = ssl.create_default_context(cafile=CA)
    ctx.check_hostname = server_name is not None
    s = socket.create_connection((H.HOST, port), timeout=5)
    try:
        t = ctx.wrap_socket(s, server_hostname=server_name)
        names = sorted(v for k, v in t.getpeercert().get("subjectAltName", ()) if k == "DNS")
        t.close()
        return names
    except ssl.SSLError as e:
        return "refused: %s" % e
    finally:
        s.close()


def sni():
    if not H.TLS:
        # Plain: no certificate is involved; the sites are chosen by Host alone
        # (vhosts), and a site certificate without a tls listener is refused.
        path = os.path.join(TMP, "plain-cert.conf")
        write(path, "listen 127.0.0.1:%d;\nsite a.test {\n  root %s;\n  tls_certificate a.crt;\n"
              "  tls_certificate_key a.key;\n}\n" % (H.free_port(), A))
        p = run(["check", "--config", path])
        R.check("plain: a site certificate without 'listen … tls' is refused at its line",
                p.returncode == 2 and ":4:3: a certificate without a 'listen … tls' address serves nothing"
                in p.stderr.decode(), p.stderr)
        return
    srv = ConfigServer(conf).start()
    try:
        for name, want in [("a.test", ["*.a.test", "a.test"]), ("x.a.test", ["*.a.test", "a.test"]),
                           ("b.test", ["b.test"]), ("B.Test", ["b.test"]), (None, ["localhost"])]:
            got = peer_names(srv.port, name)
            R.check("SNI %s: the certificate for %s" % (name, want), got == want, got)
        got = peer_names(srv.port, "nobody.test")
        R.check("SNI of an unknown name: the default certificate (which does not verify for it)",
                isinstance(got, str) and "match" in got.lower(), got)
        p = subprocess.run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % srv.port, "-servername", "b.test",
                            "-CAfile", CA, "-verify_hostname", "b.test", "-verify_return_error"],
                           input=b"", stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10)
        out = p.stdout.decode(errors="replace")
        R.check("openssl s_client -servername b.test: verified for b.test",
                p.returncode == 0 and "Verification: OK" in out and "Verified peername: b.test" in out, out[-600:])
    finally:
        srv.stop_and_check(R, "sni: exits 0")


def rules():
    srv = ConfigServer(conf).start()
    try:
        p = srv.port
        st, h, _ = get(p, "/assets/plain.css", "a.test")
        R.check("prefix rule: Cache-Control immutable",
                st == 200 and h.get("cache-control") == "public, max-age=31536000, immutable", (st, h))
        st, h, _ = get(p, "/index.html", "a.test")
        R.check("exact rule: Cache-Control no-cache", st == 200 and h.get("cache-control") == "no-cache", (st, h))
        st, h, _ = get(p, "/index.html", "b.test")
        R.check("... not on the other site", st == 200 and "cache-control" not in h, (st, h))
        st, h, body = get(p, "/app/settings/profile", "a.test")
        R.check("try_files: an SPA route answers /index.html (200)", st == 200 and body == b"site a\n", (st, body))
        st, _, body = get(p, "/errors/404.html", "a.test")
        R.check("internal: 404 when asked directly, with the page", st == 404 and body == b"custom 404\n", (st, body))
        st, _, body = get(p, "/nothing-here", "a.test")
        R.check("... which still serves as the error page", st == 404 and body == b"custom 404\n", (st, body))
        st, h, _ = get(p, "/old/post?x=1", "a.test")
        R.check("return 301: Location", st == 301 and h.get("location") == "https://a.test/new/", (st, h))
        st, _, body = get(p, "/gone", "a.test")
        R.check("return 410 with a text", st == 410 and body == b"gone for good\n", (st, body))
        st, _, body = get(p, "/styles/app.css", "a.test")
        R.check("rewrite: /styles/ served from /assets/", st == 200 and body.startswith(b"body {"), (st, body[:40]))
        st, _, body = get(p, "/pub/", "a.test")
        R.check("listing on in a location", st == 200 and b"x.txt" in body, (st, body[:200]))
        st, _, _ = get(p, "/priv/", "a.test")
        R.check("listing off elsewhere: 403", st == 403, st)
        st, h, _ = get(p, "/assets/app.css", "a.test", {"Accept-Encoding": "gzip"})
        R.check("compress on in a location: gzip", st == 200 and h.get("content-encoding") == "gzip", (st, h))
        st, h, _ = get(p, "/app.css", "a.test", {"Accept-Encoding": "gzip"})
        R.check("compress off elsewhere", st in (200, 404) and "content-encoding" not in h, (st, h))
    finally:
        srv.stop_and_check(R, "rules: exits 0")


def reload():
    srv = ConfigServer(conf).start()
    try:
        pid = srv.proc.pid
        st, _, body = get(srv.port, "/", "c.test")
        R.check("before: c.test is unknown (default site b)", body == b"site b\n", body)
        stop = threading.Event()
        counts = {"ok": 0, "failed": []}

        def client(host, want):
            while not stop.is_set():
                try:
                    st, _, body = get(srv.port, "/", host)
                    if st == 200 and body == want:
                        counts["ok"] += 1
                    else:
                        counts["failed"].append((st, body[:40]))
                except OSError as e:
                    counts["failed"].append(repr(e))

        threads = [threading.Thread(target=client, args=a) for a in [("a.test", b"site a\n"), ("b.test", b"site b\n")]]
        for t in threads:
            t.start()
        time.sleep(0.3)
        # A new site appears.
        srv.write_conf(conf(srv.port, extra_sites="site c.test {\n  root %s;\n}\n" % C))
        before = srv.stderr_text().count("SIGHUP: ")
        os.kill(pid, signal.SIGHUP)
        H.wait_until(lambda: srv.stderr_text().count("SIGHUP: ") > before, 10)
        H.wait_until(lambda: len(srv.children()) == 2, 10)
        st, _, body = get(srv.port, "/", "c.test")
        R.check("after SIGHUP: the new site c.test answers", st == 200 and body == b"site c\n", (st, body, srv.stderr_text()[-500:]))
        # 10 reloads of the same file under the same load: no descriptor kept.
        base = sorted(os.listdir("/proc/%d/fd" % pid))
        for i in range(10):
            n = srv.stderr_text().count("SIGHUP: ")
            os.kill(pid, signal.SIGHUP)
            H.wait_until(lambda: srv.stderr_text().count("SIGHUP: ") > n, 10)
            H.wait_until(lambda: len(srv.children()) == 2, 10)
        fds = sorted(os.listdir("/proc/%d/fd" % pid))
        time.sleep(0.2)
        stop.set()
        for t in threads:
            t.join(10)
        R.check("2 clients through 11 reloads: %d requests, none lost" % counts["ok"],
                counts["ok"] > 30 and not counts["failed"], counts["failed"][:5])
        R.check("10 reloads: the supervisor holds the same %d descriptors" % len(base), fds == base, (base, fds))
        R.check("... every reload logged as done", srv.stderr_text().count("SIGHUP: configuration read again") == 11,
                srv.stderr_text()[-800:])
        # An invalid file: logged, nothing changes.
        good = open(srv.conf_path).read()
        srv.write_conf(good + "site d.test {\n  rooot %s;\n}\n" % C)
        n = srv.stderr_text().count("SIGHUP: ")
        os.kill(pid, signal.SIGHUP)
        H.wait_until(lambda: srv.stderr_text().count("SIGHUP: ") > n, 10)
        err = srv.stderr_text()
        R.check("invalid file: the error logged with its line and column",
                "%s:%d:3: unknown directive 'rooot'; did you mean 'root'? (nothing changed)"
                % (srv.conf_path, good.count("\n") + 2) in err, err[-600:])
        st, _, body = get(srv.port, "/", "c.test")
        R.check("... and the sites stay", st == 200 and body == b"site c\n", (st, body))
        # A listen change takes a restart.
        srv.write_conf(good.replace("127.0.0.1:%d" % srv.port, "127.0.0.1:%d" % H.free_port()))
        n = srv.stderr_text().count("SIGHUP: ")
        os.kill(pid, signal.SIGHUP)
        H.wait_until(lambda: srv.stderr_text().count("SIGHUP: ") > n, 10)
        R.check("a listen change is refused: nothing changed",
                "the listening addresses changed: they take a restart (nothing changed)" in srv.stderr_text(),
                srv.stderr_text()[-400:])
        st, _, _ = get(srv.port, "/", "a.test")
        R.check("... and the old address serves", st == 200, st)
    finally:
        srv.stop_and_check(R, "reload: exits 0")


def password_hash(pw):
    """SHA-256 crypt, as `openssl passwd -5` makes it for a user file."""
    return subprocess.run(["openssl", "passwd", "-5", "-salt", "e2esalt", pw], check=True,
                          stdout=subprocess.PIPE, timeout=10).stdout.decode().strip()


def basic(user, pw):
    return {"Authorization": "Basic " + base64.b64encode(("%s:%s" % (user, pw)).encode()).decode()}


def access():
    users = os.path.join(TMP, "users")
    write(users, "alice:%s\n" % password_hash("first"))
    json_log, vhost_log, error_log = (os.path.join(TMP, n) for n in ("access.json", "access.vhost", "error.log"))

    def access_conf(port, log_line="access_log %s json;\n" % json_log):
        return conf(port, top=log_line + "error_log %s;\nlog_level info;\nlimit_conn 64;\n" % error_log,
                    extra_sites=(
                        "site g.test {\n  root %s;\n  auth_basic_user_file %s;\n"
                        "  allow 127.0.0.0/8;\n  allow ::1;\n  deny all;\n"
                        "  location /priv/ { auth_basic \"G admin\"; }\n"
                        "  location /pub/ { deny all; }\n"
                        "  location /assets/ { limit_req 1r/m 2; }\n}\n"
                        "site h.test {\n  root %s;\n  auth_basic H;\n  auth_basic_user_file %s;\n"
                        "  location /pub/ { auth_basic off; }\n}\n"
                        "site d.test {\n  root %s;\n  deny all;\n  location /open/ { allow all; }\n}\n"
                        % (A, users, A, users, B)))

    srv = ConfigServer(access_conf, ready_path="/").start()
    try:
        p, pid = srv.port, srv.proc.pid
        st, _, body = get(p, "/", "g.test")
        R.check("site rules allow the loopback: 200", st == 200 and body == b"site a\n", (st, body))
        st, _, _ = get(p, "/pub/x.txt", "g.test")
        R.check("a location's deny all replaces the site's allow: 403", st == 403, st)
        st, h, _ = get(p, "/priv/y.txt", "g.test")
        R.check("auth_basic in a location, the site's user file: 401 with its realm",
                st == 401 and h.get("www-authenticate") == 'Basic realm="G admin", charset="UTF-8"', (st, h))
        st, _, body = get(p, "/priv/y.txt", "g.test", basic("alice", "first"))
        R.check("... the password: 200", st == 200 and body == b"y\n", (st, body))
        answers = [get(p, "/assets/plain.css", "g.test") for _ in range(8)]
        codes = [a[0] for a in answers]
        R.check("limit_req 1r/m 2 in a location: 429 once the burst is spent (2 workers: at most 4 pass)",
                codes.count(429) >= 4 and set(codes) <= {200, 429} and codes[0] == 200, codes)
        R.check("... each with Retry-After", all(h.get("retry-after", "").isdigit() for st, h, _ in answers if st == 429),
                [h for st, h, _ in answers if st == 429][:2])
        st, _, _ = get(p, "/", "h.test")
        R.check("auth_basic on a site: 401", st == 401, st)
        st, _, _ = get(p, "/pub/x.txt", "h.test")
        R.check("auth_basic off in its location: 200 without a password", st == 200, st)
        st, _, _ = get(p, "/", "d.test")
        R.check("deny all on a site: 403", st == 403, st)
        st, _, _ = get(p, "/open/nothing", "d.test")
        R.check("allow all in its location: past the guard (404)", st == 404, st)
        # The access log: written once a second per worker.
        def json_lines():
            try:
                return [json.loads(l) for l in open(json_log).read().splitlines() if l]
            except (OSError, ValueError):
                return []
        H.wait_until(lambda: any(o.get("host") == "g.test" and o.get("status") == 401 for o in json_lines()), 5)
        rows = [o for o in json_lines() if o.get("host") == "g.test" and o.get("status") == 401]
        o = rows[0] if rows else {}
        R.check("json log: host, scheme, tls and protocol",
                o.get("host") == "g.test" and o.get("protocol") == "HTTP/1.1"
                and o.get("scheme") == ("https" if H.TLS else "http")
                and (o.get("tls") in ("TLSv1.3", "TLSv1.2") if H.TLS else o.get("tls") is None), o)
        R.check("error log: the start line in the file, not on stderr",
                "listening" in open(error_log).read().lower() or "serving" in open(error_log).read().lower(),
                (open(error_log).read()[-300:], srv.stderr_text()[-300:]))
        # A reload reads the changed user file again (and the new log format).
        write(users, "alice:%s\n" % password_hash("second"))
        srv.write_conf(access_conf(srv.port, "access_log %s vhost_combined;\n" % vhost_log))
        n = open(error_log).read().count("SIGHUP: ")
        os.kill(pid, signal.SIGHUP)
        H.wait_until(lambda: open(error_log).read().count("SIGHUP: ") > n, 10)
        H.wait_until(lambda: len(srv.children()) == 2, 10)
        R.check("reload: logged as done", "SIGHUP: configuration read again" in open(error_log).read(),
                open(error_log).read()[-400:])
        st, _, _ = get(p, "/priv/y.txt", "g.test", basic("alice", "first"))
        R.check("after the reload: the old password is refused (401)", st == 401, st)
        st, _, _ = get(p, "/priv/y.txt", "g.test", basic("alice", "second"))
        R.check("... and the new one let in (200)", st == 200, st)
        def vhost_lines():
            try:
                return open(vhost_log).read().splitlines()
            except OSError:
                return []
        H.wait_until(lambda: any(l.startswith("g.test ") and " 200 " in l for l in vhost_lines()), 5)
        line = next((l for l in vhost_lines() if l.startswith("g.test ") and " 200 " in l), "")
        R.check("vhost_combined: the Host first, then the combined fields",
                line.startswith("g.test 127.0.0.1 - - [") and '"GET /priv/y.txt HTTP/1.1" 200 2 "-" "-"' in line,
                vhost_lines()[-3:])
    finally:
        srv.stop_and_check(R, "access: exits 0")
    # limit_conn 1 (per worker, 2 workers): of 5 connections held open at once, at
    # most 2 are served; the others are closed at accept.
    srv = ConfigServer(lambda port: conf(port, top="limit_conn 1;\n")).start()
    try:
        def held():
            try:
                return H.connect(srv.port, timeout=2.0)
            except OSError:  # closed at accept: over TLS the handshake fails
                return None
        socks = [held() for _ in range(5)]
        served = 0
        for s_ in socks:
            if s_ is None:
                continue
            try:
                s_.sendall(b"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")
                r = H.Reader(s_).read_response(timeout=2.0)
                served += 1 if r is not None and r.status == 200 else 0
            except OSError:
                pass
        for s_ in socks:
            if s_ is not None:
                s_.close()
        R.check("limit_conn 1: %d of 5 connections held at once served (1 to 2)" % served, 1 <= served <= 2, served)
    finally:
        srv.stop_and_check(R, "limit_conn: exits 0")
    # A malformed access directive: check and serve refuse it at its line.
    path = os.path.join(TMP, "bad-access.conf")
    write(path, "root %s;\nlocation /a/ {\n  deny 10.0.0.0/33;\n}\n" % A)
    for cmd in (["check", "--config", path], ["serve", "--config", path]):
        p = run(cmd)
        R.check("%s: a bad prefix is refused at 3:8 (exit 2)" % cmd[0],
                p.returncode == 2 and (path + ":3:8: \"10.0.0.0/33\" is not an address") in p.stderr.decode()
                and p.stderr.decode().count("\n") == 1, (p.returncode, p.stderr))


H.part(R, "check", check_command)
H.part(R, "virtual hosts", vhosts, stop_servers=True)
H.part(R, "SNI", sni, stop_servers=True)
H.part(R, "per-path rules", rules, stop_servers=True)
H.part(R, "reload", reload, stop_servers=True)
H.part(R, "access control and logs", access, stop_servers=True)
R.finish()
