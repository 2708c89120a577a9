#!/usr/bin/env python3
"""Red-team round 4 (issue 34), configuration side, end to end in the suite's
backend (HTTPZ_IO) and transport (HTTPZ_TRANSPORT), beside what nginx does:

1. The location of the path served applies, not the one asked: a `rewrite`, a
   `try_files` fallback and a directory's index file are internal redirects
   (nginx: 401/403 in each case, the exact location's header on `/`); a cycle
   answers 500 after 10.
2. A SIGHUP with a file nested 100,000 deep (which overflowed the stack of the
   supervisor and killed the server) is an error that changes nothing: the
   server keeps serving the old configuration.
5. The site's `error_page 403` answers a `deny` (and 401 with its challenge).
"""

import base64
import os
import signal
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("conf_redteam")
H.suite_deadline(R, 50)
H.require_binary(R)
TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-conf-redteam-"))
SITE = os.path.join(TMP, "site")

H.write_file(SITE, "index.html", b"home\n")
H.write_file(SITE, "admin/index.html", b"admin page\n")
H.write_file(SITE, "admin/secret.txt", b"the secret\n")
H.write_file(SITE, "priv/index.html", b"private index\n")
H.write_file(SITE, "errors/denied.html", b"custom denied\n")
H.write_file(SITE, "blocked/x.txt", b"x\n")
# openssl passwd -5 -salt abcdefgh secret
with open(os.path.join(TMP, "users"), "w") as f:
    f.write("alice:$5$abcdefgh$gruCpC7VkOTspMQTTSAR8mtlO9Upms.fwqE5y16JVM.\n")
ALICE = "Basic " + base64.b64encode(b"alice:secret").decode()


def conf(port):
    listen = "listen 127.0.0.1:%d%s;\n" % (port, " tls" if H.TLS else "")
    tls = ("tls_certificate %s;\ntls_certificate_key %s;\n" % H.tls_files()[1:]) if H.TLS else ""
    io = ("io %s;\n" % H.IO) if H.IO else ""
    return (listen + tls + io + "workers 1;\ngrace 2s;\nroot %s;\n" % SITE +
            "auth_basic_user_file %s;\n" % os.path.join(TMP, "users") +
            "error_page 401 403 /errors/denied.html;\n"
            "location /admin/ { auth_basic Admin; }\n"
            "location /styles/ { rewrite /; }\n"
            "location /app/ { try_files $uri /admin/secret.txt; }\n"
            "location /spa/ { try_files $uri /index.html; }\n"
            "location = /priv/index.html { deny all; }\n"
            "location = /index.html { header Cache-Control no-cache; }\n"
            "location /blocked/ { deny all; }\n"
            "location /loop/ { rewrite /loop/; }\n")


class ConfServer(H.Server):
    def __init__(self):
        super().__init__(docroot=None)
        self.conf_path = os.path.join(TMP, "httpz.conf")

    @property
    def argv(self):
        with open(self.conf_path, "w") as f:
            f.write(conf(self.port))
        return [self.binary, "serve", "--config", self.conf_path]


def get(port, path, headers=None):
    st, hd, body = H.request(port, "GET", path, headers=headers)
    return st, {k.lower(): v for k, v in hd}, body


def redirects():
    srv = ConfServer().start()
    try:
        p = srv.port
        st, _, _ = get(p, "/admin/")
        R.check("/admin/ asks the password (401)", st == 401, st)
        for path, want, what in [
            ("/styles/admin/", 401, "rewrite into /admin/"),
            ("/styles/admin/secret.txt", 401, "rewrite into /admin/, a file"),
            ("/app/nothing", 401, "try_files fallback /admin/secret.txt"),
            ("/priv/", 403, "index file under location = /priv/index.html { deny all; }"),
            ("/styles/blocked/x.txt", 403, "rewrite into a denied location"),
        ]:
            st, _, body = get(p, path)
            R.check("%s: %s answers %d, as nginx (not the file)" % (path, what, want),
                    st == want and b"secret" not in body and b"admin page" not in body
                    and b"private index" not in body, (st, body[:60]))
        st, _, body = get(p, "/styles/admin/", {"Authorization": ALICE})
        R.check("rewrite into /admin/ with the password: the page", st == 200 and body == b"admin page\n", (st, body))
        st, h, body = get(p, "/")
        R.check("/: the index file gets location = /index.html's Cache-Control",
                st == 200 and body == b"home\n" and h.get("cache-control") == "no-cache", (st, h, body))
        st, h, body = get(p, "/spa/deep/route")
        R.check("SPA fallback: location = /index.html's Cache-Control",
                st == 200 and body == b"home\n" and h.get("cache-control") == "no-cache", (st, h, body))
        st, _, _ = get(p, "/loop/x")
        R.check("a rewrite cycle: 500 after 10 redirects", st == 500, st)
        R.check("... logged as nginx says it", "rewrite or internal redirection cycle" in srv.stderr_text(),
                srv.stderr_text()[-300:])
        # Issue 34, finding 5: the site's error page answers the guard's refusals.
        st, _, body = get(p, "/blocked/x.txt")
        R.check("deny: 403 with the site's error_page", st == 403 and body == b"custom denied\n", (st, body))
        st, h, body = get(p, "/admin/")
        R.check("auth_basic: 401 with the site's error_page and the challenge",
                st == 401 and body == b"custom denied\n"
                and h.get("www-authenticate") == 'Basic realm="Admin", charset="UTF-8"', (st, h, body))
    finally:
        srv.stop_and_check(R, "redirects: exits 0")


def deep_reload():
    srv = ConfServer().start()
    try:
        pid = srv.proc.pid
        good = open(srv.conf_path).read()
        with open(srv.conf_path, "w") as f:
            f.write(good + "site a {" * 100000)
        n = srv.stderr_text().count("SIGHUP: ")
        os.kill(pid, signal.SIGHUP)
        H.wait_until(lambda: srv.stderr_text().count("SIGHUP: ") > n or not srv.alive(), 10)
        R.check("SIGHUP with a file nested 100,000 deep: the server lives", srv.alive(), srv.stderr_text()[-400:])
        R.check("... the error logged at its line and column, nothing changed",
                "blocks nested more than 8 deep" in srv.stderr_text() and "(nothing changed)" in srv.stderr_text(),
                srv.stderr_text()[-400:])
        st, _, body = get(srv.port, "/")
        R.check("... and the old configuration serves", st == 200 and body == b"home\n", (st, body))
        with open(srv.conf_path, "w") as f:
            f.write(good)
    finally:
        srv.stop_and_check(R, "deep reload: exits 0")


H.part(R, "internal redirects", redirects, stop_servers=True)
H.part(R, "reload of a deep file", deep_reload, stop_servers=True)
R.finish()
