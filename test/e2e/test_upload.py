"""Uploads end to end: Upload.to_file and Upload.multipart (server/upload.ml)
behind test/server/upload/upload_server.exe, with real clients.

1. curl -F: a field and three files (one of 5 MiB, one named
   "../../etc/passwd"): 200, each stored file's sha256 equals what was
   sent, the client's name is kept only as a sanitised display name
   ("passwd"), every stored path is a generated name inside the upload
   directory, mode 0600.
2. curl -T: a 5 MiB body stored whole, under a generated name and under a
   given one; sha256 checked.
3. http.client with a hand-made multipart body whose data holds CR, LF and
   prefixes of the delimiter, sent in small pieces: the exact bytes.
4. Limits: a body over the route's limit (Content-Length, and chunked) is
   413 with nothing left in the directory; a file, a field, the count of
   files over /small's limits: 413, nothing left.
5. Malformed multipart (junk after a delimiter, no closing delimiter, a
   part without a name): 400; a body that is not multipart: 415. Nothing
   left. Storing into a directory that does not exist: 500.
6. A client that disconnects in the middle of a body (to_file, multipart):
   no file and no temporary file left after a short wait.
7. HTTP/2 (curl --http2-prior-knowledge, or --http2 over TLS): a multipart
   upload with a 5 MiB file (sha256 checked) and a 413.
Run for HTTPZ_IO=epoll|uring and HTTPZ_TRANSPORT=plain|tls.
"""
import hashlib
import json
import os
import socket
import stat
import subprocess
import tempfile
import time

import harness as H

R = H.Results("upload")
H.suite_deadline(R, 150)

SERVER = os.path.join(H.ROOT, "_build", "default", "test", "server", "upload", "upload_server.exe")
WORK = R.cleanup(tempfile.mkdtemp(prefix="httpz-upload-"))
UP = os.path.join(WORK, "up")
SRC = os.path.join(WORK, "src")
os.makedirs(UP)
os.makedirs(SRC)


def sha(b):
    return hashlib.sha256(b).hexdigest()


def src_file(name, data):
    p = os.path.join(SRC, name)
    with open(p, "wb") as f:
        f.write(data)
    return p


BIG = os.urandom(5 * 1024 * 1024)
BIG_PATH = src_file("big.bin", BIG)
SMALL = b"small file\r\n--not a delimiter\r\n"
SMALL_PATH = src_file("small.txt", SMALL)
EVIL = b"root:x:0:0:pwned\n"
EVIL_PATH = src_file("evil", EVIL)


def listing():
    return sorted(os.listdir(UP))


def clear():
    for n in os.listdir(UP):
        os.unlink(os.path.join(UP, n))


def empty_after(label, timeout=3.0):
    ok = H.wait_until(lambda: listing() == [], timeout)
    R.check("%s: nothing left in the upload directory" % label, ok, listing())


def curl_json(args):
    out = H.curl(["-s", "-o", "-", "-w", "\n%{http_code}"] + args, timeout=30)
    body, _, code = out.stdout.rpartition(b"\n")
    try:
        code = int(code)
    except ValueError:
        code = None
    try:
        j = json.loads(body)
    except ValueError:
        j = None
    return code, j, body


def check_stored(label, path, data):
    inside = os.path.dirname(path) == UP
    try:
        got = open(path, "rb").read()
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError as e:
        got, mode = None, e
    R.check("%s: stored in the upload directory, sha256 equal, mode 0600" % label,
            inside and got is not None and sha(got) == sha(data) and mode == 0o600,
            (path, inside, mode, got and len(got)))


def no_temps(label):
    R.check("%s: no temporary file" % label, not any(n.startswith(".upload-") for n in listing()), listing())


def curl_form(port, h2=False):
    clear()
    mode = (["--http2"] if H.TLS else ["--http2-prior-knowledge"]) if h2 else []
    tag = "h2" if h2 else "h1"
    code, j, body = curl_json(mode + ["-F", "title=hello world", "-F", "big=@%s" % BIG_PATH,
                                      "-F", "small=@%s;type=text/plain" % SMALL_PATH,
                                      "-F", "evil=@%s;filename=../../etc/passwd" % EVIL_PATH,
                                      H.url(port, "/form")])
    if not R.check("curl -F (%s): 200 with JSON" % tag, code == 200 and j is not None, (code, body[:300])):
        return
    R.check("curl -F (%s): the field" % tag, j["fields"] == [["title", "hello world"]], j["fields"])
    files = {f["field"]: f for f in j["files"]}
    R.check("curl -F (%s): three files in order" % tag, [f["field"] for f in j["files"]] == ["big", "small", "evil"], j)
    if len(files) != 3:
        return
    check_stored("curl -F (%s) 5 MiB" % tag, files["big"]["path"], BIG)
    R.check("curl -F (%s): sizes" % tag, files["big"]["size"] == len(BIG) and files["small"]["size"] == len(SMALL),
            j["files"])
    check_stored("curl -F (%s) small" % tag, files["small"]["path"], SMALL)
    R.check("curl -F (%s): content types" % tag, files["small"]["content_type"] == "text/plain"
            and files["big"]["content_type"] == "application/octet-stream", j["files"])
    check_stored("curl -F (%s) ../../etc/passwd" % tag, files["evil"]["path"], EVIL)
    R.check("curl -F (%s): ../../etc/passwd shown as passwd, stored under a generated name" % tag,
            files["evil"]["filename"] == "passwd" and os.path.basename(files["evil"]["path"]).startswith("upload-")
            and b"pwned" not in open("/etc/passwd", "rb").read(), files["evil"])
    R.check("curl -F (%s): big.bin shown as big.bin" % tag, files["big"]["filename"] == "big.bin", files["big"])
    no_temps("curl -F (%s)" % tag)
    R.check("curl -F (%s): exactly the three files stored" % tag, len(listing()) == 3, listing())


def put_whole(port):
    clear()
    code, j, body = curl_json(["-T", BIG_PATH, H.url(port, "/file")])
    if R.check("curl -T /file: 200", code == 200 and j is not None, (code, body[:300])):
        check_stored("curl -T /file", j["path"], BIG)
        R.check("curl -T /file: generated name, size", os.path.basename(j["path"]).startswith("upload-")
                and j["size"] == len(BIG), j)
    code, j, body = curl_json(["-T", SMALL_PATH, H.url(port, "/file/given.txt")])
    if R.check("curl -T /file/given.txt: 200", code == 200 and j is not None, (code, body[:300])):
        R.check("curl -T /file/given.txt: that name", j["path"] == os.path.join(UP, "given.txt"), j)
        check_stored("curl -T /file/given.txt", j["path"], SMALL)
    code, j, body = curl_json(["-H", "Transfer-Encoding: chunked", "-T", SMALL_PATH, H.url(port, "/file/given.txt")])
    R.check("chunked PUT replaces given.txt", code == 200 and j and j["size"] == len(SMALL), (code, body[:200]))
    no_temps("curl -T")
    R.check("curl -T: two files", len(listing()) == 2, listing())


def hand_made(port):
    clear()
    bnd = "x-Boundary'()+_,-./:=?"
    data = b"\r\n--x-Boundary'()+_,-./:=\r\n--x-B\r\r\n\n--\x00\xff" * 200
    body = (b"preamble\r\n--" + bnd.encode() + b"\r\n"
            b'Content-Disposition: form-data; name="f"; filename="C:\\\\dir\\\\r\xc3\xa9sum\xc3\xa9.pdf"\r\n'
            b"Content-Type: application/pdf\r\n\r\n" + data + b"\r\n--" + bnd.encode() + b"  \r\n"
            b"content-disposition: form-data; name=note\r\n\r\nline1\r\nline2\r\n--" + bnd.encode() + b"--\r\nepilogue")
    conn = H.http_client(port, timeout=10)
    conn.putrequest("POST", "/form")
    conn.putheader("Content-Type", 'multipart/form-data; boundary="%s"' % bnd)
    conn.putheader("Content-Length", str(len(body)))
    conn.endheaders()
    for i in range(0, len(body), 777):
        conn.send(body[i:i + 777])
    r = conn.getresponse()
    out = r.read()
    conn.close()
    try:
        j = json.loads(out)
    except ValueError:
        j = None
    if not R.check("http.client hand-made body: 200", r.status == 200 and j is not None, (r.status, out[:300])):
        return
    R.check("hand-made: field with CRLF", j["fields"] == [["note", "line1\r\nline2"]], j["fields"])
    R.check("hand-made: one file", len(j["files"]) == 1, j)
    if j["files"]:
        f = j["files"][0]
        check_stored("hand-made file (delimiter prefixes inside)", f["path"], data)
        R.check("hand-made: backslash path reduced to its last component", f["filename"] == "r\u00c3\u00a9sum\u00c3\u00a9.pdf"
                and f["content_type"] == "application/pdf", f)


def raw(port, head, body, timeout=10):
    s = H.connect(port, timeout)
    try:
        s.sendall(head.encode("latin-1") + body)
        r = H.Reader(s).read_response(timeout=timeout)
        return r
    finally:
        s.close()


def multipart_head(path, length, ctype="multipart/form-data; boundary=BB", extra=""):
    return ("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: %s\r\nContent-Length: %d\r\n%sConnection: close\r\n\r\n"
            % (path, ctype, length, extra))


def mp(parts, close=True):
    out = b""
    for name, filename, data in parts:
        fn = b'; filename="%s"' % filename if filename is not None else b""
        out += b'--BB\r\nContent-Disposition: form-data; name="%s"%s\r\n\r\n%s\r\n' % (name, fn, data)
    return out + (b"--BB--\r\n" if close else b"")


def limits(port):
    clear()
    # over the 8 MiB limit, announced by Content-Length
    code, j, body = curl_json(["-F", "a=@%s" % BIG_PATH, "-F", "b=@%s" % BIG_PATH, H.url(port, "/form")])
    R.check("10 MiB multipart over an 8 MiB limit: 413", code == 413, (code, body[:200]))
    empty_after("413 multipart (Content-Length)")
    code, j, body = curl_json(["-H", "Transfer-Encoding: chunked", "-F", "a=@%s" % BIG_PATH, "-F", "b=@%s" % BIG_PATH,
                               H.url(port, "/form")])
    R.check("10 MiB chunked multipart over an 8 MiB limit: 413", code == 413, (code, body[:200]))
    empty_after("413 multipart (chunked)")
    twice = src_file("twice.bin", BIG + BIG)
    code, j, body = curl_json(["-H", "Transfer-Encoding: chunked", "-T", twice, H.url(port, "/file")])
    R.check("10 MiB chunked PUT over an 8 MiB limit: 413", code == 413, (code, body[:200]))
    empty_after("413 PUT (chunked)")
    # /small: a file of 2 KiB (limit 1 KiB), a field of 17 bytes (16), three files (2)
    for label, body_ in [("file over max_file", mp([(b"f", b"a", b"x" * 2048)])),
                         ("field over max_field", mp([(b"f", None, b"y" * 17)])),
                         ("three files over max_files", mp([(b"a", b"1", b"1"), (b"b", b"2", b"2"), (b"c", b"3", b"3")])),
                         ("five parts over max_parts", mp([(b"a%d" % i, None, b"v") for i in range(5)]))]:
        r = raw(port, multipart_head("/small", len(body_)), body_)
        R.check("/small %s: 413" % label, r is not None and r.status == 413, r)
        empty_after("/small " + label)
    body_ = mp([(b"f", b"a", b"x" * 1024), (b"g", None, b"y" * 16)])
    r = raw(port, multipart_head("/small", len(body_)), body_)
    R.check("/small at every limit: 200", r is not None and r.status == 200, r)
    clear()


def malformed(port):
    clear()
    cases = [("junk after a delimiter", mp([(b"f", b"a", b"data")]).replace(b"--BB--", b"--BBjunk"), 400),
             ("no closing delimiter", mp([(b"f", b"a", b"data")], close=False), 400),
             ("no delimiter at all", b"just bytes", 400),
             ("part without a name", b"--BB\r\nContent-Type: text/plain\r\n\r\nx\r\n--BB--\r\n", 400),
             ("bare LF framing", mp([(b"f", b"a", b"data")]).replace(b"\r\n", b"\n"), 400),
             ("header line without colon", b"--BB\r\nContent-Disposition form-data\r\n\r\nx\r\n--BB--\r\n", 400)]
    for label, body_, want in cases:
        r = raw(port, multipart_head("/form", len(body_)), body_)
        R.check("malformed multipart, %s: %d" % (label, want), r is not None and r.status == want, r)
        empty_after("malformed " + label)
    body_ = mp([(b"f", None, b"v")])
    r = raw(port, multipart_head("/form", len(body_), ctype="text/plain"), body_)
    R.check("text/plain to a multipart route: 415", r is not None and r.status == 415, r)
    r = raw(port, multipart_head("/form", len(body_), ctype="multipart/form-data"), body_)
    R.check("multipart without a boundary: 415", r is not None and r.status == 415, r)
    r = raw(port, multipart_head("/form", len(body_), ctype="multipart/form-data; boundary=\"bad;\""), body_)
    R.check("multipart with an invalid boundary: 415", r is not None and r.status == 415, r)
    empty_after("415")
    code, j, body = curl_json(["-T", SMALL_PATH, H.url(port, "/nodir")])
    R.check("to_file into a missing directory: 500", code == 500, (code, body[:200]))
    code, j, body = curl_json(["-F", "f=@%s" % SMALL_PATH, H.url(port, "/nodir")])
    R.check("multipart into a missing directory: 500", code == 500, (code, body[:200]))
    code, j, body = curl_json(["-F", "f=only a field", H.url(port, "/nodir")])
    R.check("multipart without files needs no directory: 200", code == 200 and j == {"fields": [["f", "only a field"]], "files": []},
            (code, body[:200]))
    empty_after("500")


def disconnect(port):
    clear()
    for label, head, pre in [
            ("PUT /file", "PUT /file HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n" % (4 << 20), b""),
            ("POST /form", multipart_head("/form", 4 << 20),
             b'--BB\r\nContent-Disposition: form-data; name="f"; filename="x"\r\n\r\n')]:
        s = H.connect(port, 10)
        s.sendall(head.encode("latin-1") + pre)
        chunk = os.urandom(64 * 1024)
        for _ in range(24):  # 1.5 MiB of the 4 announced
            s.sendall(chunk)
        # The file exists as a temporary while the body streams.
        seen = H.wait_until(lambda: any(n.startswith(".upload-") for n in listing()), 3.0)
        R.check("%s mid-body: a temporary file is being written" % label, seen, listing())
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.close()  # RST
        empty_after("%s, client gone mid-body" % label, timeout=5.0)


def h2(port):
    curl_form(port, h2=True)
    clear()
    mode = ["--http2"] if H.TLS else ["--http2-prior-knowledge"]
    # nghttp, not curl: the server answers 413 while the client still
    # sends, then resets the stream with NO_ERROR (RFC 9113 §8.1), and
    # curl 7.88 at times reports that as a stream error (exit 92) instead
    # of showing the response it already has.
    over = src_file("over.bin", BIG + BIG)
    out = subprocess.run(["nghttp", "-v", "-d", over, "-H", "content-type: multipart/form-data; boundary=BB",
                          H.url(port, "/form")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30,
                         env=H.CLIENT_ENV)
    R.check("h2: 10 MiB multipart over an 8 MiB limit: 413, then RST_STREAM NO_ERROR",
            b":status: 413" in out.stdout and b"error_code=NO_ERROR" in out.stdout, out.stdout[-1500:])
    empty_after("h2 413")
    out = H.curl(mode + ["-s", "-o", "/dev/null", "-w", "%{http_version}", H.url(port, "/")])
    R.check("h2: curl spoke HTTP/2", out.stdout == b"2", out.stdout)


def main():
    if not R.check("upload_server.exe built", os.path.exists(SERVER), SERVER):
        R.finish()
    srv = H.Program([SERVER, "-d", UP], ready_path="/")
    H.part(R, "start upload_server", srv.start)
    if not srv.alive():
        R.finish()
    for name, fn in [("curl -F", curl_form), ("curl -T", put_whole), ("hand-made body", hand_made),
                     ("limits", limits), ("malformed", malformed), ("disconnect", disconnect), ("HTTP/2", h2)]:
        H.part(R, name, lambda fn=fn: fn(srv.port))
    srv.stop_and_check(R, "upload_server exits 0 on SIGTERM")
    R.finish()


main()
