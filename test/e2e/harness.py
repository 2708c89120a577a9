"""Shared helpers for the end-to-end suites in test/e2e/.

Every suite runs `httpz serve` as a real process on 127.0.0.1 and talks to it
with real clients. This module gives them:

- `Results`: a check collector. `check(name, cond, detail)` prints one
  `ok <name>` or `FAIL <name>: <detail>` line; `finish()` prints the last line
  `N passed, N failed` that scripts/test.sh counts and exits non-zero on any
  failure.
- `Server`: starts the binary on a free port with a docroot, waits until it
  answers, stops it with SIGTERM and reports whether it exited 0 within the
  grace period (it is killed on timeout).
- `Reader` / `request`: a minimal HTTP/1.1 response reader over a raw socket,
  enough for pipelining, error responses and keep-alive loops.
- `check_no_words` / `check_shutdown_words`: the steady-state GC checks
  (0 minor words per request) on stats and on the shutdown log line.
- `suite_deadline`: a wall-clock bound for the whole suite; on expiry the
  suite records a failure, kills its servers and still prints its summary.
- Backends: HTTPZ_IO=epoll|uring passes `--io` to every server.
- Transports: with HTTPZ_TRANSPORT=tls every `Server` serves HTTPS with a
  certificate of a test CA made at test time (`tls_files`), and `connect`,
  `request`, `url` and `curl` speak TLS (Python's ssl, curl --cacert):
  scripts/test.sh runs every suite once per transport, so a suite written
  against these helpers tests both.

Every wait here is bounded, and all traffic goes to 127.0.0.1. A missing
binary is a failure, never a skip.
"""

import atexit
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("HTTPZ_BIN") or os.path.join(ROOT, "_build", "install", "default", "bin", "httpz")
HOST = "127.0.0.1"

# How bytes move between the clients and every server of the suite.
TRANSPORT = os.environ.get("HTTPZ_TRANSPORT", "plain")
if TRANSPORT not in ("plain", "tls"):
    raise SystemExit("HTTPZ_TRANSPORT must be plain or tls, not %r" % TRANSPORT)
TLS = TRANSPORT == "tls"
SCHEME = "https" if TLS else "http"
# And the server's backend (`--io`); empty: the server's default.
IO = os.environ.get("HTTPZ_IO", "")
if IO not in ("", "epoll", "uring"):
    raise SystemExit("HTTPZ_IO must be epoll or uring, not %r" % IO)

# The stats endpoint answers requests that carry this token (--stats-token).
STATS_TOKEN = "e2e-stats-token"
STATS_ARGS = ["--stats-token", STATS_TOKEN]
STATS_AUTH = "Authorization: Bearer " + STATS_TOKEN

# Subprocess clients (curl, wrk, chromium) must never go through a proxy.
CLIENT_ENV = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
CLIENT_ENV["NO_PROXY"] = "*"
CLIENT_ENV["no_proxy"] = "*"


def log(msg):
    print(msg, flush=True)


_tls_dir = None


def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE, timeout=30)


def make_cert(d, name, ca=None, key_type="ec", sans="DNS:localhost,IP:127.0.0.1,IP:::1"):
    """A key and a certificate in directory d: self-signed CA when ca is
    None, else a server certificate for localhost signed by ca (a
    (cert, key) pair). Returns (cert, key)."""
    key, csr, cert = (os.path.join(d, name + ext) for ext in (".key", ".csr", ".pem"))
    if key_type == "ec":
        openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key)
    else:
        openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key)
    if ca is None:
        openssl("req", "-x509", "-new", "-key", key, "-out", cert, "-days", "2", "-subj",
                "/CN=httpz test CA", "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign")
    else:
        ext = os.path.join(d, name + ".ext")
        with open(ext, "w") as f:
            # A CRL location, as a public CA's certificates carry (testssl.sh
            # flags a certificate without one); nothing is served there.
            f.write("subjectAltName=%s\nextendedKeyUsage=serverAuth\n"
                    "crlDistributionPoints=URI:http://127.0.0.1/httpz-test-ca.crl\n" % sans)
        openssl("req", "-new", "-key", key, "-out", csr, "-subj", "/CN=localhost")
        openssl("x509", "-req", "-in", csr, "-CA", ca[0], "-CAkey", ca[1], "-CAcreateserial",
                "-out", cert, "-days", "2", "-extfile", ext)
    return cert, key


def tls_files():
    """(ca_cert, server_cert, server_key) of a test CA made once per
    process, in a temporary directory removed at exit."""
    global _tls_dir
    if _tls_dir is None:
        d = tempfile.mkdtemp(prefix="httpz-e2e-tls-")
        atexit.register(lambda: __import__("shutil").rmtree(d, ignore_errors=True))
        ca = make_cert(d, "ca")
        cert, key = make_cert(d, "server", ca=ca)
        # Test-only keys, readable by any user: suites also start servers
        # as nobody.
        os.chmod(d, 0o755)
        for f in (ca[0], cert, key):
            os.chmod(f, 0o644)
        _tls_dir = (d, ca[0], cert, key)
    return _tls_dir[1:]


def client_context(alpn=("http/1.1",), **versions):
    """Python's ssl client context trusting the test CA."""
    ctx = ssl.create_default_context(cafile=tls_files()[0])
    if alpn:
        ctx.set_alpn_protocols(list(alpn))
    for k, v in versions.items():
        setattr(ctx, k, v)
    return ctx


_default_ctx = None


def wrap(sock, ctx=None, session=None):
    """[sock] over TLS (verified against the test CA, for 127.0.0.1)."""
    global _default_ctx
    if ctx is None:
        if _default_ctx is None:
            _default_ctx = client_context()
        ctx = _default_ctx
    return ctx.wrap_socket(sock, server_hostname=HOST, session=session)


def wrap_nonblocking(sock):
    """A non-blocking socket over TLS; the caller drives do_handshake()."""
    global _default_ctx
    if _default_ctx is None:
        _default_ctx = client_context()
    return _default_ctx.wrap_socket(sock, server_hostname=HOST, do_handshake_on_connect=False)


def http_client(port, timeout=5):
    """Python's http.client connection in the suite's transport."""
    import http.client
    if TLS:
        return http.client.HTTPSConnection(HOST, port, timeout=timeout, context=client_context())
    return http.client.HTTPConnection(HOST, port, timeout=timeout)


def url(port, path="/"):
    return "%s://%s:%d%s" % (SCHEME, HOST, port, path)


class Results:
    def __init__(self, suite):
        self.suite = suite
        self.passed = 0
        self.failed = 0
        self.failures = []
        self.finished = False
        self.dirs = []

    def cleanup(self, path):
        """Remove [path] (a temp dir) when the suite finishes, however it ends."""
        self.dirs.append(path)
        return path

    def check(self, name, cond, detail=""):
        if cond:
            self.passed += 1
            log("ok   %s" % name)
        else:
            self.failed += 1
            self.failures.append(name)
            d = str(detail)
            if len(d) > 1500:
                d = d[:1500] + "...[%d chars]" % len(d)
            log("FAIL %s: %s" % (name, d))
        return bool(cond)

    def finish(self):
        if self.finished:
            return
        self.finished = True
        _stop_all_servers()
        import shutil
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)
        for srv in _servers:
            try:
                os.unlink(srv.stderr_path)
            except OSError:
                pass
        if self.failures:
            log("failed checks: " + "; ".join(self.failures))
        log("%d passed, %d failed" % (self.passed, self.failed))
        sys.stdout.flush()
        os._exit(0 if self.failed == 0 else 1)


def suite_deadline(results, seconds):
    """After [seconds], record a failure, stop servers and print the summary."""

    def on_alarm(_sig, _frame):
        results.check("suite finished within %ds" % seconds, False, "suite deadline exceeded")
        results.finish()

    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)


def require_binary(results):
    """A missing binary fails the suite (it does not skip it)."""
    if not (os.path.isfile(BIN) and os.access(BIN, os.X_OK)):
        results.check("httpz binary present", False,
                      "%s missing: run `dune build @install` (the suite cannot run)" % BIN)
        results.finish()


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((HOST, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def raise_nofile(n=None):
    """Raise this process's soft RLIMIT_NOFILE (children inherit it)."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if n is None else min(n, hard) if hard != resource.RLIM_INFINITY else n
    if want > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)


_servers = []


def _stop_all_servers():
    for s in list(_servers):
        try:
            if s.proc and s.proc.poll() is None:
                s.proc.kill()
                s.proc.wait(timeout=5)
        except Exception:
            pass


atexit.register(_stop_all_servers)


class ServerError(Exception):
    pass


class Server:
    """One `httpz serve` process. Its stderr goes to a file (`stderr_text()`)."""

    def __init__(self, docroot, workers=1, args=(), prefix=(), ready_path="/", binary=None,
                 tls=None, preexec=None):
        self.docroot = docroot
        self.binary = binary or BIN
        self.workers = workers
        self.args = list(args)
        self.prefix = list(prefix)
        self.ready_path = ready_path
        self.tls = tls  # (cert, key) instead of the test CA's server pair
        self.preexec = preexec  # run in the child before the exec
        self.port = None
        self.proc = None
        self.returncode = None
        self.stop_seconds = None
        fd, self.stderr_path = tempfile.mkstemp(prefix="httpz-e2e-stderr-", suffix=".log")
        os.close(fd)

    @property
    def argv(self):
        return self.prefix + [self.binary, "serve", "-d", self.docroot, "-p", str(self.port),
                              "--host", HOST, "--workers", str(self.workers)] + \
            transport_args(self.tls, io="--io" not in self.args) + self.args

    def start(self, timeout=10.0):
        """Start on a free port; return once a request gets any HTTP answer."""
        last = None
        for _attempt in range(3):  # the free port can be taken between probe and bind
            self.port = free_port()
            err = open(self.stderr_path, "wb")
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL,
                                         stdout=err, stderr=err, start_new_session=True,
                                         preexec_fn=self.preexec)
            err.close()
            _servers.append(self)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                try:
                    status, _h, _b = request(self.port, "GET", self.ready_path, timeout=1.0)
                    if status:
                        return self
                except OSError as e:
                    last = e
                time.sleep(0.05)
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(timeout=5)
                raise ServerError("server did not answer within %.0fs (%s); argv=%s; stderr:\n%s"
                                  % (timeout, last, self.argv, self.stderr_text()))
            text = self.stderr_text()
            if "in use" not in text.lower():
                raise ServerError("server exited with %s at start; argv=%s; stderr:\n%s"
                                  % (self.proc.returncode, self.argv, text))
        raise ServerError("could not bind a free port: " + self.stderr_text())

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, grace=5.0):
        """SIGTERM, wait up to [grace] s, kill on timeout.

        Returns the exit code (None when it had to be killed); the time taken
        is in [stop_seconds]."""
        if self.proc is None:
            return None
        if self.proc.poll() is not None:
            self.returncode = self.proc.returncode
            return self.returncode
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.returncode = self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
            self.returncode = None
        self.stop_seconds = time.monotonic() - t0
        # Reap workers that might outlive a killed master (same session).
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        return self.returncode

    def stop_and_check(self, results, name="server exits 0 on SIGTERM", grace=5.0):
        rc = self.stop(grace)
        results.check(name, rc == 0,
                      "exit code %s after %.2fs (None = killed after %.0fs grace); stderr tail:\n%s"
                      % (rc, self.stop_seconds or 0, grace, self.stderr_text()[-1500:]))
        return rc

    def stderr_text(self):
        try:
            with open(self.stderr_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def children(self):
        """Pids of the live direct children of the server process (its workers).

        /proc/PID/task/*/children needs CONFIG_PROC_CHILDREN, which this
        kernel lacks, so scan /proc/*/stat for the parent pid instead."""
        if not self.alive():
            return []
        return [pid for pid, ppid, state in proc_table() if ppid == self.proc.pid and state not in "ZX"]

    def stats(self, timeout=5.0):
        status, headers, body = request(self.port, "GET", "/__httpz/stats", timeout=timeout,
                                        headers={"Authorization": "Bearer " + STATS_TOKEN})
        if status != 200:
            raise ServerError("stats answered %s: %r" % (status, body[:200]))
        return json.loads(body.decode("utf-8"))


def check_no_words(results, label, before, after, n, what="", seconds=None):
    """Two stats of one worker around [n] requests ([label] names them):
    the requests delta is [n], the minor-words delta 0."""
    dreq = after["requests"] - before["requests"]
    dw = after["minor_words"] - before["minor_words"]
    wpr = dw / dreq if dreq else float("nan")
    log("# %s: %d requests%s, minor words delta %r -> %r words/request"
        % (label, dreq, "" if seconds is None else " in %.2f s" % seconds, dw, wpr))
    results.check("stats: requests delta for the %s run is %d%s" % (label, n, what), dreq == n,
                  "delta %d (%r -> %r)" % (dreq, before, after))
    results.check("steady state: minor words per %s request == 0%s (observed %r = %r words / %d requests)"
                  % (label, what, wpr, dw, dreq), dw == 0, "stats before %r after %r" % (before, after))


def check_shutdown_words(results, srv, served):
    """The stopped one-worker [srv]'s last log line: at least [served]
    requests, 0 minor words per request past its steady-state mark."""
    err = srv.stderr_text()
    m = re.findall(r"httpz\[\d+\]: worker (\d+) served (\d+) requests, minor words/request (\S+)", err)
    log("# shutdown log: %r" % (m,))
    results.check("shutdown log: one 'worker PID served N requests, minor words/request X' line", len(m) == 1,
                  err[-800:])
    if m:
        results.check("shutdown log: served >= %d requests" % served, int(m[0][1]) >= served, m[0])
        try:
            x = float(m[0][2])
        except ValueError:
            x = None
        results.check("shutdown log: minor words/request == 0 (observed %s)" % m[0][2], x == 0.0, m[0])


def proc_state(pid):
    """The state letter of [pid] (R, S, Z, ...) or None when it no longer exists."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def proc_table():
    """(pid, ppid, state) of every process."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            out.append((int(name), int(fields[1]), fields[0]))
        except (OSError, IndexError, ValueError):
            pass
    return out


# ---------------------------------------------------------------------------
# Minimal HTTP/1.1 response reader over a raw socket.


class ProtocolError(Exception):
    pass


class Response:
    def __init__(self, status, reason, headers, body, raw_head):
        self.status = status
        self.reason = reason
        self.headers = headers  # list of (lowercased name, value)
        self.body = body
        self.raw_head = raw_head

    def header(self, name, default=None):
        name = name.lower()
        for k, v in self.headers:
            if k == name:
                return v
        return default

    def header_all(self, name):
        name = name.lower()
        return [v for k, v in self.headers if k == name]

    def __repr__(self):
        return "<Response %s %r headers=%r body[%d]=%r>" % (
            self.status, self.reason, self.headers, len(self.body), self.body[:120])


class Reader:
    """Reads successive responses from one connection, with a deadline per call."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""
        self.eof = False

    def _fill(self, deadline):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise socket.timeout("deadline reached")
        self.sock.settimeout(remaining)
        data = self.sock.recv(1 << 20)
        if not data:
            self.eof = True
        self.buf += data
        return data

    def read_response(self, head_only=False, timeout=5.0):
        """Parse one response. [head_only] for answers to HEAD (no body).

        Returns None on a clean EOF before any byte of a response."""
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self.buf:
            if not self._fill(deadline):
                if not self.buf:
                    return None
                raise ProtocolError("EOF inside a response head: %r" % self.buf[:300])
        i = self.buf.index(b"\r\n\r\n")
        raw_head = self.buf[:i + 4]
        self.buf = self.buf[i + 4:]
        lines = raw_head[:-4].split(b"\r\n")
        parts = lines[0].split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
            raise ProtocolError("bad status line %r" % lines[0])
        status = int(parts[1])
        reason = parts[2].decode("latin-1") if len(parts) > 2 else ""
        headers = []
        for line in lines[1:]:
            if b":" not in line:
                raise ProtocolError("bad header line %r" % line)
            k, v = line.split(b":", 1)
            headers.append((k.decode("latin-1").lower(), v.strip(b" \t").decode("latin-1")))
        r = Response(status, reason, headers, b"", raw_head)
        if head_only or status in (204, 304) or 100 <= status < 200:
            return r
        te = r.header("transfer-encoding")
        cl = r.header("content-length")
        if te is not None and te.lower().endswith("chunked"):
            r.body = self._read_chunked(deadline)
        elif cl is not None:
            n = int(cl)
            while len(self.buf) < n:
                if not self._fill(deadline):
                    raise ProtocolError("EOF after %d of %d body bytes" % (len(self.buf), n))
            r.body, self.buf = self.buf[:n], self.buf[n:]
        else:  # delimited by close
            while self._fill(deadline):
                pass
            r.body, self.buf = self.buf, b""
        return r

    def _read_chunked(self, deadline):
        body = b""
        while True:
            while b"\r\n" not in self.buf:
                if not self._fill(deadline):
                    raise ProtocolError("EOF in chunk size")
            line, self.buf = self.buf.split(b"\r\n", 1)
            size = int(line.split(b";")[0], 16)
            if size == 0:
                while not self.buf.startswith(b"\r\n"):  # trailers, then the blank line
                    while b"\r\n" not in self.buf:
                        if not self._fill(deadline):
                            raise ProtocolError("EOF in trailers")
                    if self.buf.startswith(b"\r\n"):
                        break
                    self.buf = self.buf.split(b"\r\n", 1)[1]
                self.buf = self.buf[2:]
                return body
            while len(self.buf) < size + 2:
                if not self._fill(deadline):
                    raise ProtocolError("EOF in chunk data")
            body += self.buf[:size]
            self.buf = self.buf[size + 2:]

    def read_to_eof(self, timeout=3.0):
        """Bytes until the peer closes; raises socket.timeout if it does not."""
        deadline = time.monotonic() + timeout
        while not self.eof:
            self._fill(deadline)
        data, self.buf = self.buf, b""
        return data


def forbid_io_uring():
    """For preexec: a seccomp filter under which io_uring_setup fails with
    EPERM, as the default profiles of container runtimes make it do (x86-64
    system call numbers)."""
    import ctypes
    import struct
    libc = ctypes.CDLL(None, use_errno=True)
    # BPF: load the system call number; io_uring_setup (425) -> ERRNO(EPERM),
    # anything else -> ALLOW.
    prog = [(0x20, 0, 0, 0), (0x15, 0, 1, 425), (0x06, 0, 0, 0x00050000 | 1),
            (0x06, 0, 0, 0x7fff0000)]
    code = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *i) for i in prog))

    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = Fprog(len(prog), ctypes.addressof(code))
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp")


def transport_args(pair=None, io=True):
    """`httpz serve` arguments for the suite's backend (unless [io] is
    false: the caller chose) and transport: over TLS, the test CA's server
    certificate, or [pair] = (cert, key)."""
    io = ["--io", IO] if IO and io else []
    if not TLS:
        return io
    cert, key = pair or tls_files()[1:]
    return io + ["--tls-cert", cert, "--tls-key", key]


def connect(port, timeout=5.0, rcvbuf=None, src=None):
    """A connection to the server on [port] in the suite's transport (TLS
    handshake done); [rcvbuf]: SO_RCVBUF set before connecting; [src]: the
    source address (any 127/8 address reaches the loopback: a client of
    its own for the server's per-address rules)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(timeout)
    try:
        if src:
            s.bind((src, 0))
        s.connect((HOST, port))
        return wrap(s) if TLS else s
    except BaseException:
        s.close()
        raise


def send_get(sock, path, headers=None):
    """A keep-alive GET of [path] written on [sock] (Host: 127.0.0.1)."""
    h = {"Host": "127.0.0.1"}
    h.update(headers or {})
    raw = "GET %s HTTP/1.1\r\n" % path + "".join("%s: %s\r\n" % kv for kv in h.items()) + "\r\n"
    sock.sendall(raw.encode("latin-1"))


def request(port, method, path, headers=None, body=b"", timeout=5.0):
    """One request on a fresh connection (Connection: close). Returns (status, headers, body)."""
    h = {"Host": "127.0.0.1:%d" % port, "Connection": "close"}
    h.update(headers or {})
    if body:
        h["Content-Length"] = str(len(body))
    raw = "%s %s HTTP/1.1\r\n" % (method, path) + "".join("%s: %s\r\n" % kv for kv in h.items()) + "\r\n"
    s = connect(port, timeout)
    try:
        s.sendall(raw.encode("latin-1") + body)
        r = Reader(s).read_response(head_only=(method == "HEAD"), timeout=timeout)
        if r is None:
            return None, [], b""
        return r.status, r.headers, r.body
    finally:
        s.close()


def write_file(root, rel, data, mode=0o644):
    """Writes [data] at [root]/[rel] (directories made), with [mode]."""
    p = os.path.join(root, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data)
    os.chmod(p, mode)


def wait_until(pred, timeout, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


def curl(args, timeout=20):
    """Runs curl; returns CompletedProcess (stdout bytes)."""
    tls = ["--cacert", tls_files()[0]] if TLS else []
    return subprocess.run(["curl", "-sS", "--noproxy", "*", "--max-time", str(timeout)] + tls + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=CLIENT_ENV,
                          timeout=timeout + 5)


def parse_curl_heads(out):
    """Split `curl -D -` header output into a list of (status, {name: value}) (last one last)."""
    heads = []
    for block in out.replace(b"\r\n", b"\n").split(b"\n\n"):
        lines = block.strip(b"\n").split(b"\n")
        if not lines or not lines[0].startswith(b"HTTP/"):
            continue
        status = int(lines[0].split()[1])
        h = {}
        for l in lines[1:]:
            if b":" in l:
                k, v = l.split(b":", 1)
                h[k.decode("latin-1").strip().lower()] = v.strip().decode("latin-1")
        heads.append((status, h))
    return heads


def part(results, name, fn, stop_servers=False):
    """Runs one named part of a suite: an exception or a server that fails to
    start becomes a failed check instead of ending the script; the part's
    duration is logged. With stop_servers, every server started is stopped
    afterwards."""
    t0 = time.monotonic()
    log("# --- %s" % name)
    try:
        fn()
    except ServerError as e:
        results.check("%s: server starts" % name, False, e)
    except Exception:
        results.check("%s: ran without an exception" % name, False, traceback.format_exc())
    finally:
        if stop_servers:
            _stop_all_servers()
    log("# %s took %.1f s" % (name, time.monotonic() - t0))


class Program(Server):
    """A program other than `httpz serve` that takes `-p PORT` (the examples),
    started, checked and stopped like a Server."""

    def __init__(self, argv, ready_path="/"):
        super().__init__(docroot=None, ready_path=ready_path)
        self.base_argv = list(argv)

    @property
    def argv(self):
        # The example programs take the transport options of `httpz serve`.
        return self.base_argv + ["-p", str(self.port)] + transport_args()


def example(name):
    """Path of a built example program (dune builds examples/NAME.exe)."""
    return os.path.join(ROOT, "_build", "default", "examples", name + ".exe")


def rss_kib(pid):
    """Resident memory of a process, in KiB (VmRSS), or -1."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1
