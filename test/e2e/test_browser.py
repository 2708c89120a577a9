"""A real browser against `httpz serve`: headless Chromium loads the example site.

Checks that the DOM has the page title, that the server's access log shows the
stylesheet and the image requested and answered 200, and that the screenshot
is a rendered page (not blank). The screenshot is kept at SCREENSHOT.

Run: python3 test/e2e/test_browser.py   (needs _build/install/default/bin/httpz
and /usr/bin/chromium). The last line is `N passed, N failed`.
"""

import html.parser
import base64
import hashlib
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
import urllib.parse
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("browser")
H.suite_deadline(R, 58)
H.require_binary(R)

CHROMIUM = "/usr/bin/chromium"
SITE = os.path.join(H.ROOT, "examples", "site")
SCREENSHOT = "/tmp/httpz-e2e-browser.png"
TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-browser-"))


def png_encode(w, h, pixel):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(w)) for y in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def png_decode(data):
    """Minimal PNG decoder (8-bit RGB/RGBA, non-interlaced): (w, h, rows of bytes, bytes per pixel)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat = 8, b""
    w = h = bpp = None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, ctype, _c, _f, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError("unsupported PNG (depth %d, type %d)" % (depth, ctype))
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        f = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pr) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, rows, bpp


def make_fallback_site(root):
    """Used only while examples/site/ does not exist yet."""
    os.makedirs(os.path.join(root, "img"))
    with open(os.path.join(root, "index.html"), "w") as f:
        f.write('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
                '<title>httpz example site</title>\n<link rel="stylesheet" href="style.css">\n'
                '</head><body><h1>httpz</h1><p>Served by httpz.</p>\n'
                '<img src="img/logo.png" alt="logo" width="128" height="128"></body></html>\n')
    with open(os.path.join(root, "style.css"), "w") as f:
        f.write("body { background: #1e3a5f; color: #f0f0f0; font-family: sans-serif; }\n"
                "h1 { color: #ffcc00; }\n")
    with open(os.path.join(root, "img", "logo.png"), "wb") as f:
        f.write(png_encode(64, 64, lambda x, y: (255, 4 * x, 4 * y)))


class Assets(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.title, self.in_title, self.css, self.images = "", False, [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "title":
            self.in_title = True
        elif tag == "link" and "stylesheet" in (a.get("rel") or "").lower().split() and a.get("href"):
            self.css.append(a["href"])
        elif tag == "img" and a.get("src"):
            self.images.append(a["src"])

    def handle_endtag(self, tag):
        if tag == "title":
            self.in_title = False

    def handle_data(self, data):
        if self.in_title:
            self.title += data


def local_paths(refs):
    out = []
    for ref in refs:
        u = urllib.parse.urlsplit(urllib.parse.urljoin("/", ref))
        if not u.scheme and not u.netloc:
            out.append(u.path)
    return out


def tls_trust():
    """Over TLS, Chromium trusts the test server's key, and only it (by the
    SHA-256 of its public key, as in HPKP pins)."""
    if not H.TLS:
        return []
    cert = H.tls_files()[1]
    pub = subprocess.run(["openssl", "x509", "-in", cert, "-pubkey", "-noout"], check=True,
                         stdout=subprocess.PIPE).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=pub, check=True,
                         stdout=subprocess.PIPE).stdout
    pin = base64.b64encode(hashlib.sha256(der).digest()).decode()
    return ["--ignore-certificate-errors-spki-list=" + pin]


def chromium(args, timeout=40):
    prof = tempfile.mkdtemp(prefix="profile-", dir=TMP)
    argv = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--no-proxy-server", "--user-data-dir=" + prof] + tls_trust() + args
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=H.CLIENT_ENV,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return None, out, err
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)  # leftover helper processes
        except OSError:
            pass
    return p.returncode, out, err


def main():
    R.check("chromium installed at %s" % CHROMIUM, os.access(CHROMIUM, os.X_OK), "scripts/deps.sh test")
    if os.path.isfile(os.path.join(SITE, "index.html")):
        site = SITE
        H.log("# site: examples/site/")
    else:
        site = os.path.join(TMP, "site")
        make_fallback_site(site)
        H.log("# site: examples/site/ missing, using a minimal fallback site in %s" % site)
    assets = Assets()
    with open(os.path.join(site, "index.html"), encoding="utf-8") as f:
        assets.feed(f.read())
    title = assets.title.strip()
    css, images = local_paths(assets.css), local_paths(assets.images)
    R.check("site index.html has a title, a stylesheet and an image",
            title and css and images, "title=%r css=%r images=%r" % (title, css, images))

    log_path = os.path.join(TMP, "access.log")
    try:
        srv = H.Server(site, workers=1, args=["--access-log", log_path], ready_path="/__e2e_probe").start()
    except H.ServerError as e:
        R.check("server starts", False, e)
        R.finish()
    url = H.url(srv.port, "/")

    rc, out, err = chromium(["--dump-dom", url])
    dom = out.decode("utf-8", "replace")
    R.check("chromium --dump-dom exits 0", rc == 0, "rc=%s stderr=%s" % (rc, err[-800:]))
    m = re.search(r"<title>(.*?)</title>", dom, re.S)
    R.check("DOM contains the page title %r" % title,
            m is not None and m.group(1).strip() == title, "DOM head: %r" % dom[:600])

    # A subdirectory page reached without its trailing slash: the browser
    # follows the 301 to /docs/ and loads docs/index.html.
    docs_index = os.path.join(site, "docs", "index.html")
    docs_title = None
    if os.path.isfile(docs_index):
        sub = Assets()
        with open(docs_index, encoding="utf-8") as f:
            sub.feed(f.read())
        docs_title = sub.title.strip()
        rc, out, err = chromium(["--dump-dom", url + "docs"])
        dom = out.decode("utf-8", "replace")
        m = re.search(r"<title>(.*?)</title>", dom, re.S)
        R.check("chromium at /docs follows the redirect: DOM title %r" % docs_title,
                rc == 0 and m is not None and m.group(1).strip() == docs_title,
                "rc=%s DOM head: %r stderr=%s" % (rc, dom[:400], err[-400:]))

    if os.path.exists(SCREENSHOT):
        os.unlink(SCREENSHOT)
    rc, out, err = chromium(["--screenshot=" + SCREENSHOT, "--window-size=1024,768",
                             "--hide-scrollbars", url])
    R.check("chromium --screenshot exits 0 and writes %s" % SCREENSHOT,
            rc == 0 and os.path.isfile(SCREENSHOT), "rc=%s stderr=%s" % (rc, err[-800:]))
    try:
        w, h, rows, bpp = png_decode(open(SCREENSHOT, "rb").read())
        colors = set()
        for y in range(0, h, 8):
            row = rows[y]
            for x in range(0, w, 8):
                colors.add(row[x * bpp:x * bpp + 3])
        R.check("screenshot is 1024x768 and not blank (%d distinct sampled colours)" % len(colors),
                (w, h) == (1024, 768) and len(colors) >= 3, "size %dx%d, colours %d" % (w, h, len(colors)))
    except Exception as e:
        R.check("screenshot decodes", False, repr(e))

    srv.stop_and_check(R)  # flushes the access log
    try:
        log_text = open(log_path, encoding="utf-8", errors="replace").read()
    except OSError as e:
        log_text = ""
        R.check("access log written to %s" % log_path, False, repr(e))
    lines = log_text.splitlines()
    entries = []  # (method, path, status)
    versions = {}  # path -> protocol of its last request
    for line in lines:
        # Common Log Format, then the request time in microseconds.
        mm = re.match(r'^\S+ \S+ \S+ \[[^\]]+\] "([A-Z]+) (\S+) HTTP/(1\.[01]|2\.0)" (\d{3}) (\d+|-) \d+$', line)
        if mm:
            path = urllib.parse.unquote(mm.group(2).split("?")[0])
            entries.append((mm.group(1), path, int(mm.group(4))))
            versions[path] = mm.group(3)
    R.check("access log lines are in Common Log Format with the request time (%d lines)" % len(lines),
            lines and len(entries) == len(lines), log_text[:800])
    R.check("access log: / requested by chromium twice, answered 200",
            entries.count(("GET", "/", 200)) >= 2, entries)
    for p in css:
        R.check("access log: stylesheet %s requested and answered 200" % p, ("GET", p, 200) in entries, entries)
    for p in images:
        R.check("access log: image %s requested and answered 200" % p, ("GET", p, 200) in entries, entries)
    if docs_title is not None:
        R.check("access log: /docs answered 301, then /docs/ 200",
                ("GET", "/docs", 301) in entries and ("GET", "/docs/", 200) in entries, entries)
    if H.TLS:
        # ALPN offers h2 first: chromium loads every resource over HTTP/2
        # (the harness's own probe is HTTP/1.1).
        pages = [p for p in versions if p != "/__e2e_probe"]
        R.check("over TLS every resource chromium loaded came over HTTP/2",
                pages and all(versions[p] == "2.0" for p in pages), versions)


try:
    main()
except Exception:
    import traceback
    R.check("suite ran without an exception", False, traceback.format_exc())
finally:
    R.finish()
