"""Sends every request vector of test/lib/http/vectors/request/ to a running `httpz serve`.

Each vector goes over a fresh raw socket in one packet together with a
follower, `GET /index.html`:
- error vectors: one response whose status is the vector's `http_status`,
  then the server closes the connection: the follower (a request smuggled
  behind a head whose framing is unknowable) is never answered;
- complete vectors: the status in `serve_status` (the static server's
  answer: 200, 204, 404, 405), then, when the head allows keep-alive, the
  follower's 200 with index.html; otherwise (or with `serve_close: true`)
  the connection closes with no second response;
- partial vectors (sent alone): no response and no close within a short wait.

Run: python3 test/e2e/test_vectors_server.py  (needs _build/install/default/bin/httpz)
The last line is `N passed, N failed`.
"""

import os
import socket
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("vectors-server")
H.suite_deadline(R, 28)
H.require_binary(R)

VEC = os.path.join(H.ROOT, "test", "lib", "http", "vectors", "request")
TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-vectors-"))
DOC = os.path.join(TMP, "root")
os.makedirs(DOC)
INDEX = b"<!doctype html><title>vectors</title>index " + os.urandom(4).hex().encode() + b"\n"
with open(os.path.join(DOC, "index.html"), "wb") as f:
    f.write(INDEX)
FOLLOWER = b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n"


def read_expect(path):
    exp = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                k, v = line.split(":", 1)
                exp[k.strip()] = v.strip()
    return exp


def send(sock, data):
    """Sends [data]; a server that answers and closes early may reset the rest."""
    try:
        sock.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        pass


def rest_after(rd, timeout=2.0):
    """('eof', bytes) when the peer closes (a reset counts as closed), ('open', bytes) on timeout."""
    try:
        return "eof", rd.read_to_eof(timeout=timeout)
    except ConnectionResetError:
        return "eof", rd.buf
    except socket.timeout:
        return "open", rd.buf


def run_error(port, name, raw, exp):
    want = int(exp["http_status"])
    s = H.connect(port, timeout=3.0)
    rd = H.Reader(s)
    try:
        send(s, raw + FOLLOWER)
        try:
            r = rd.read_response(timeout=3.0)
        except ConnectionResetError as e:
            r = e
        state, rest = rest_after(rd)
    except Exception as e:  # noqa: BLE001 - any failure is this vector's
        R.check(name, False, repr(e))
        return
    finally:
        s.close()
    got = r.status if isinstance(r, H.Response) else r
    R.check("%s -> %d, closed, follower not answered" % (name, want),
            got == want and state == "eof" and rest == b"" and INDEX not in rest,
            "first=%r state=%s trailing=%r" % (got, state, rest[:200]))


def run_complete(port, name, raw, exp):
    want = int(exp["serve_status"])
    keep = exp.get("keep_alive", "true") == "true" and exp.get("serve_close") != "true"
    is_head = raw.startswith(b"HEAD ")
    s = H.connect(port, timeout=3.0)
    rd = H.Reader(s)
    try:
        send(s, raw + FOLLOWER)
        r1 = rd.read_response(head_only=is_head, timeout=3.0)
        if keep:
            r2 = rd.read_response(timeout=3.0)
            ok = (r1 is not None and r1.status == want and r2 is not None
                  and r2.status == 200 and r2.body == INDEX)
            detail = "first=%r follower=%r" % (r1, r2)
        else:
            state, rest = rest_after(rd)
            ok = r1 is not None and r1.status == want and state == "eof" and rest == b""
            detail = "first=%r state=%s trailing=%r" % (r1, state, rest[:200])
    except Exception as e:  # noqa: BLE001
        ok, detail = False, repr(e)
    finally:
        s.close()
    R.check("%s -> %d%s" % (name, want, ", then the follower" if keep else ", then close"), ok, detail)


def run_partial(port, name, raw):
    s = H.connect(port, timeout=3.0)
    try:
        send(s, raw)
        s.settimeout(0.2)
        try:
            data = s.recv(4096)
            ok, detail = False, "answered or closed: %r" % data[:200]
        except socket.timeout:
            ok, detail = True, ""
    except Exception as e:  # noqa: BLE001
        ok, detail = False, repr(e)
    finally:
        s.close()
    R.check("%s -> no answer yet" % name, ok, detail)


def main():
    try:
        srv = H.Server(DOC, workers=1, ready_path="/index.html").start()
    except H.ServerError as e:
        R.check("server starts", False, e)
        R.finish()
    names = sorted(f[:-5] for f in os.listdir(VEC) if f.endswith(".http"))
    R.check("request vectors found", len(names) >= 50, "%d in %s" % (len(names), VEC))
    for name in names:
        with open(os.path.join(VEC, name + ".http"), "rb") as f:
            raw = f.read()
        exp = read_expect(os.path.join(VEC, name + ".expect"))
        status = exp.get("status")
        if status == "error":
            run_error(srv.port, name, raw, exp)
        elif status == "complete":
            if "serve_status" not in exp:
                R.check(name, False, "complete vector without serve_status")
            else:
                run_complete(srv.port, name, raw, exp)
        elif status == "partial":
            run_partial(srv.port, name, raw)
        else:
            R.check(name, False, "unknown status %r" % status)
    R.check("server still alive", srv.alive(), srv.stderr_text()[-1000:])
    srv.stop_and_check(R)
    R.finish()


main()
