"""Raw-socket end-to-end tests of `httpz serve`: pipelining, malformed requests,
request smuggling and path traversal.

Run: python3 test/e2e/test_raw.py   (needs _build/install/default/bin/httpz)
The last line is `N passed, N failed`.
"""

import os
import socket
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("raw")
H.suite_deadline(R, 55)
H.require_binary(R)

TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-raw-"))
DOC = os.path.join(TMP, "root")
MARK = b"SECRET-MARKER-" + os.urandom(6).hex().encode()
PASSWD_MARK = b"root:x:0:0"  # first line of /etc/passwd on Debian


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return data


A = write(os.path.join(DOC, "a.txt"), b"AAAA first\n")
B = write(os.path.join(DOC, "b.txt"), b"BBBBBBBB second\n")
C = write(os.path.join(DOC, "c.txt"), b"CC third\n" * 100)
write(os.path.join(DOC, "sub", "s.txt"), b"in sub\n")
write(os.path.join(TMP, "secret.txt"), MARK + b"\n")
write(os.path.join(TMP, "secretdir", "secret.txt"), MARK + b" in dir\n")
# Symlinks inside the root that point outside it: following them would escape.
os.symlink(os.path.join(TMP, "secret.txt"), os.path.join(DOC, "link-secret.txt"))
os.symlink("../secret.txt", os.path.join(DOC, "rel-link-secret.txt"))
os.symlink(os.path.join(TMP, "secretdir"), os.path.join(DOC, "linkdir"))
os.symlink("/etc/passwd", os.path.join(DOC, "passwd"))
# A hard link is NOT an escape: it is another directory entry for the same
# inode, and that entry lives inside the root. Whoever could create it could
# equally have copied the file into the root; serving it reveals nothing the
# root's owner did not put there, and no path resolution leaves the root.
# Only symlinks (resolved by name at open time) can point outside, which is
# what openat2(RESOLVE_BENEATH) forbids. So the hard link must be served: 200.
HARD = write(os.path.join(TMP, "outside-hard.txt"), b"HARDLINK-CONTENT " + os.urandom(4).hex().encode())
os.link(os.path.join(TMP, "outside-hard.txt"), os.path.join(DOC, "hard.txt"))

ALL_RESPONSES = []  # every raw byte received, to check that no path leaks


def exchange(port, raw, timeout=3.0):
    """Send [raw] on a fresh connection; return (responses, trailing bytes, closed, error)."""
    s = H.connect(port)
    rd = H.Reader(s)
    resps, err, closed, rest = [], None, False, b""
    try:
        s.sendall(raw)
        while True:
            r = rd.read_response(timeout=timeout)
            if r is None:
                closed = True
                break
            resps.append(r)
            ALL_RESPONSES.append(r.raw_head + r.body)
            if (r.header("connection") or "").lower() == "close" or r.status >= 400:
                try:
                    rest = rd.read_to_eof(timeout=3.0)
                    closed = True
                except socket.timeout:
                    closed = False
                except ConnectionResetError:
                    closed = True
                break
    except socket.timeout as e:
        err = "timeout: %s" % e
    except ConnectionResetError as e:
        err, closed = "reset: %s" % e, True
    except Exception as e:
        err = repr(e)
    finally:
        s.close()
    if rest:
        ALL_RESPONSES.append(rest)
    return resps, rest, closed, err


def main():
    try:
        srv = H.Server(DOC, workers=1, ready_path="/a.txt").start()
    except H.ServerError as e:
        R.check("server starts", False, e)
        R.finish()
    port = srv.port

    # --- pipelining --------------------------------------------------------
    s = H.connect(port)
    rd = H.Reader(s)
    s.sendall(b"GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n"
              b"GET /b.txt HTTP/1.1\r\nHost: x\r\n\r\n"
              b"GET /c.txt HTTP/1.1\r\nHost: x\r\n\r\n")
    got = []
    try:
        for _ in range(3):
            got.append(rd.read_response())
    except Exception as e:
        got.append(repr(e))
    R.check("pipelining: 3 requests in one send -> 3 responses in order",
            len(got) == 3 and all(isinstance(r, H.Response) and r.status == 200 for r in got)
            and [r.body for r in got] == [A, B, C], got)
    # The connection is still usable after the pipelined batch.
    try:
        s.sendall(b"GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        r4 = rd.read_response()
        tail = rd.read_to_eof()
        R.check("pipelining: connection reusable, Connection: close honoured",
                r4 is not None and r4.status == 200 and r4.body == A and tail == b"", (r4, tail))
    except Exception as e:
        R.check("pipelining: connection reusable, Connection: close honoured", False, repr(e))
    s.close()

    # Mixed framing in one packet: GET, HEAD (no body), 304 (no body), GET.
    st, h, _ = H.request(port, "GET", "/b.txt")
    etag = dict(h).get("etag", '"none"')
    s = H.connect(port)
    rd = H.Reader(s)
    s.sendall(b"GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n"
              b"HEAD /c.txt HTTP/1.1\r\nHost: x\r\n\r\n"
              + ("GET /b.txt HTTP/1.1\r\nHost: x\r\nIf-None-Match: %s\r\n\r\n" % etag).encode()
              + b"GET /b.txt HTTP/1.1\r\nHost: x\r\n\r\n")
    got = []
    try:
        got.append(rd.read_response())
        got.append(rd.read_response(head_only=True))
        got.append(rd.read_response())
        got.append(rd.read_response())
    except Exception as e:
        got.append(repr(e))
    ok = (len(got) == 4 and all(isinstance(r, H.Response) for r in got)
          and [r.status for r in got] == [200, 200, 304, 200]
          and got[0].body == A and got[1].header("content-length") == str(len(C))
          and got[3].body == B)
    R.check("pipelining: GET, HEAD, 304, GET framed correctly", ok, got)
    s.close()

    # --- malformed requests: status, then the connection is closed ---------
    cases = [
        ("bad method token", b"G(T /a.txt HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("space before colon", b"GET /a.txt HTTP/1.1\r\nHost : x\r\n\r\n", 400),
        ("obs-fold", b"GET /a.txt HTTP/1.1\r\nHost: x\r\nX-A: a\r\n  folded\r\n\r\n", 400),
        ("Content-Length + Transfer-Encoding",
         b"POST /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
         b"0\r\n\r\n", 400),
        ("two different Content-Lengths",
         b"POST /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400),
        ("Content-Length with a sign", b"POST /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\nabc", 400),
        ("Content-Length overflowing",
         b"POST /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n", 400),
        ("HTTP/2.0", b"GET /a.txt HTTP/2.0\r\nHost: x\r\n\r\n", 505),
        ("target of 9 KiB", b"GET /" + b"a" * (9 * 1024) + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
        ("200 header fields",
         b"GET /a.txt HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(200)) + b"\r\n",
         431),
        ("head of 40 KiB", b"GET /a.txt HTTP/1.1\r\nHost: x\r\nX-Big: " + b"v" * (40 * 1024) + b"\r\n\r\n", 431),
        ("Transfer-Encoding: gzip, chunked",
         b"POST /a.txt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501),
        ("Transfer-Encoding: chunked, gzip (final coding not chunked)",
         b"POST /a.txt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400),
        ("missing Host in HTTP/1.1", b"GET /a.txt HTTP/1.1\r\nAccept: */*\r\n\r\n", 400),
        ("two Host fields", b"GET /a.txt HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", 400),
        ("bare CR in a field value", b"GET /a.txt HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n", 400),
        ("control character in a field value", b"GET /a.txt HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n", 400),
    ]
    for name, raw, want in cases:
        resps, rest, closed, err = exchange(port, raw)
        st = resps[0].status if resps else None
        R.check("%s -> %d and connection closed" % (name, want),
                st == want and len(resps) == 1 and closed and rest == b"",
                "got statuses %r, closed=%s, trailing=%r, error=%s, first=%r"
                % ([r.status for r in resps], closed, rest[:200], err, resps[:1]))

    # --- smuggling probe ----------------------------------------------------
    raw = (b"POST /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n"
           b"GET /b.txt HTTP/1.1\r\nHost: x\r\n\r\n")
    resps, rest, closed, err = exchange(port, raw)
    R.check("smuggling: CL 0 + TE chunked + second request -> only the 400, then close",
            [r.status for r in resps] == [400] and closed and rest == b""
            and all(B not in r.body for r in resps),
            "statuses %r closed=%s trailing=%r err=%s" % ([r.status for r in resps], closed, rest[:300], err))
    raw = (b"POST /a.txt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 40\r\n\r\n"
           b"0\r\n\r\nGET /b.txt HTTP/1.1\r\nHost: x\r\n\r\n")
    resps, rest, closed, err = exchange(port, raw)
    R.check("smuggling: TE chunked then CL + second request -> only the 400, then close",
            [r.status for r in resps] == [400] and closed and rest == b"",
            "statuses %r closed=%s trailing=%r err=%s" % ([r.status for r in resps], closed, rest[:300], err))

    # --- traversal ------------------------------------------------------------
    attempts = [
        "/../secret.txt", "/../../../../../../etc/passwd", "/../etc/passwd",
        "/%2e%2e/secret.txt", "/%2e%2e/%2e%2e/etc/passwd", "/%2E%2E/secret.txt", "/.%2e/secret.txt",
        "/..%2fsecret.txt", "/..%2fetc%2fpasswd", "/sub/..%2f..%2fsecret.txt",
        "/%252e%252e/secret.txt", "/%252e%252e/",
        "/%00", "/a%00b", "/a.txt%00.html",
        "/..\\secret.txt", "/..\\..\\etc\\passwd", "/..%5csecret.txt",
        "http://x/../secret.txt", "http://x/../../etc/passwd",
        "//etc/passwd", "/./../secret.txt", "/sub/../../secret.txt",
        # Overlong UTF-8 ("." "/" "\\" in 2- and 3-byte forms) and IIS %u: bytes, never separators.
        "/%c0%ae%c0%ae/secret.txt", "/%c0%ae%c0%ae%c0%afsecret.txt", "/..%c0%afsecret.txt",
        "/%e0%80%ae%e0%80%ae/secret.txt", "/..%c1%9csecret.txt", "/sub/..%c0%af..%c0%afsecret.txt",
        "/%u002e%u002e/secret.txt",
        "/link-secret.txt", "/rel-link-secret.txt", "/linkdir/secret.txt", "/linkdir/", "/passwd",
    ]
    for target in attempts:
        raw = ("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % target).encode("latin-1")
        resps, rest, closed, err = exchange(port, raw)
        data = b"".join(r.raw_head + r.body for r in resps) + rest
        st = resps[0].status if resps else None
        R.check("traversal %s -> 4xx, no secret bytes" % target,
                st is not None and 400 <= st < 500 and MARK not in data and PASSWD_MARK not in data,
                "status %s, err=%s, secret leaked=%s, passwd leaked=%s, response=%r"
                % (st, err, MARK in data, PASSWD_MARK in data, data[:300]))

    # Legitimate in-root paths that look odd are still served.
    for target, want in (("/sub/../a.txt", A), ("/./b.txt", B), ("/%61.txt", A), ("/sub/./s.txt", b"in sub\n"),
                         ("http://x/a.txt", A)):
        raw = ("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % target).encode()
        resps, rest, closed, err = exchange(port, raw)
        R.check("in-root path %s -> 200 with the file" % target,
                len(resps) == 1 and resps[0].status == 200 and resps[0].body == want,
                "responses %r err=%s" % (resps, err))
    resps, rest, closed, err = exchange(port, b"GET /hard.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    R.check("hard link inside the root is served (200, its bytes): not an escape",
            len(resps) == 1 and resps[0].status == 200 and resps[0].body == HARD, "responses %r err=%s" % (resps, err))

    # --- no filesystem path in any response ------------------------------------
    for target in ("/missing.txt", "/sub/missing/", "/link-secret.txt", "/%00"):
        exchange(port, ("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % target).encode())
    leaks = [r[:300] for r in ALL_RESPONSES if TMP.encode() in r or DOC.encode() in r or b"/tmp/" in r]
    R.check("no response (of %d) contains the docroot or temp path" % len(ALL_RESPONSES), not leaks, leaks[:3])

    st, _, body = H.request(port, "GET", "/a.txt")
    R.check("server still serves after all the bad input", st == 200 and body == A, (st, body))
    srv.stop_and_check(R)


try:
    main()
except Exception:
    import traceback
    R.check("suite ran without an exception", False, traceback.format_exc())
finally:
    R.finish()
