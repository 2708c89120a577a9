#!/usr/bin/env python3
"""Soak test of `httpz serve`: mixed load, slowloris and malformed requests at once.

Run: make soak                     (10 minutes; SOAK_SECONDS=N to change)
     bench/soak/soak.py --seconds 120 [--httpz PATH] [--port N] [--io uring|epoll]

`make soak` runs it once per backend (io_uring, then epoll), SOAK_SECONDS each.

One `httpz serve --workers 1 --stats-token T` on 127.0.0.1, on a generated docroot (612 B,
16 KiB, 1 MiB files), receives at the same time, for the whole duration:

- wrk keep-alive traffic (-t1 -c64) and `Connection: close` traffic (-t1 -c8), each
  request picking one of the three files (bench/soak/mix.lua);
- ~200 slowloris connections trickling header bytes; the server must answer each
  with 408 and close it within --header-timeout (+ slack); each is then replaced;
- a loop of malformed requests, each on a new connection, each checked for its
  expected status and for the connection being closed with nothing after the
  one response.

Every 10 s it samples the server's RSS (/proc/PID/status VmRSS), open fds
(/proc/PID/fd) and its GC counters (GET /__httpz/stats). The first sample under
load (after a 10 s warm-up) is compared with the last: RSS and heap_words must not
grow beyond start x 1.1 + a small slack; RSS may exceed that only within the
slot-buffer bound (SLOT_KB below), and the verdict says so. After the load stops, the server's fds
must come back to the count measured before the load (after one request per
file). The exit status is 0 only when every check passes.

Bounded: every generator has the soak's duration, a watchdog ends the script at
duration + 180 s, and the server and wrk (each in its own process group) are
killed on any exit, including SIGINT/SIGTERM. Python 3, standard library only.
"""

import argparse
import atexit
import json
import os
import re
import resource
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HOST = "127.0.0.1"

RSS_SLACK_KB = 4096         # absolute slack on top of start x 1.1
HEAP_SLACK_WORDS = 262144   # 2 MiB of words on 64-bit
HEADER_TIMEOUT = 10         # passed explicitly to httpz serve
TIMEOUT_SLACK = 5.0         # a slowloris connection may live header_timeout + this
# A connection takes buffers (read 32 KiB, write 16 KiB + reserve: the server
# defaults) from the worker's pools while a request or response is in flight,
# and the pools keep some spare ones: memory follows peak concurrency, at most
# one set per slot (stats: slots_created). Pages become resident only when
# first written, so RSS may rise while requests of new sizes reach buffers for
# the first time. That growth is bounded by slots x SLOT_KB.
SLOT_KB = 52


def log(msg):
    sys.stderr.write("[soak %s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


# --- process bookkeeping: everything we start is killed on exit -------------

CHILDREN = []  # Popen objects, each the leader of its own process group
TMPDIRS = []
STOP = threading.Event()


def spawn(argv, **kw):
    p = subprocess.Popen(argv, start_new_session=True, **kw)
    CHILDREN.append(p)
    return p


def kill_group(p, sig=signal.SIGTERM):
    try:
        os.killpg(p.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def cleanup():
    STOP.set()
    for p in CHILDREN:
        if p.poll() is None:
            kill_group(p)
    deadline = time.time() + 3
    for p in CHILDREN:
        try:
            p.wait(timeout=max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            kill_group(p, signal.SIGKILL)
            try:
                p.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
    for d in TMPDIRS:
        shutil.rmtree(d, ignore_errors=True)


def on_signal(signum, _frame):
    log("signal %d: stopping" % signum)
    cleanup()
    os._exit(128 + signum)


# --- docroot and server --------------------------------------------------------

FILES = [("612b.html", 612), ("16k.bin", 16 * 1024), ("1m.bin", 1024 * 1024)]


def make_docroot(d):
    pat = bytes(range(0x21, 0x7f))  # printable, deterministic
    for name, size in FILES:
        data = (pat * (size // len(pat) + 1))[:size]
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


def find_httpz(explicit):
    cands = [explicit] if explicit else [
        os.path.join(ROOT, "_build/install/default/bin/httpz"),
        os.path.join(ROOT, "_build/default/bin/httpz.exe")]
    for c in cands:
        if c and os.access(c, os.X_OK):
            return c
    sys.exit("soak: httpz not built (looked at %s); run make build" % ", ".join(cands))


def free_port():
    s = socket.socket()
    s.bind((HOST, 0))
    port = s.getsockname()[1]
    s.close()
    return port


STATS_TOKEN = "soak-stats"


def http_get(port, path, timeout=5.0):
    """One GET on a fresh connection with Connection: close; returns (status, body)."""
    s = socket.create_connection((HOST, port), timeout=timeout)
    try:
        s.sendall(("GET %s HTTP/1.1\r\nHost: soak\r\nConnection: close\r\n"
                   "Authorization: Bearer %s\r\n\r\n" % (path, STATS_TOKEN)).encode())
        data = read_to_eof(s, timeout)
    finally:
        s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    m = re.match(rb"HTTP/1\.1 (\d{3}) ", head)
    return (int(m.group(1)) if m else None), body


def read_to_eof(s, timeout):
    s.settimeout(timeout)
    chunks = []
    while True:
        d = s.recv(65536)
        if not d:
            return b"".join(chunks)
        chunks.append(d)


def stats(port):
    st, body = http_get(port, "/__httpz/stats")
    if st != 200:
        raise RuntimeError("stats answered %r" % st)
    return json.loads(body)


def proc_rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def proc_brk_kb(pid):
    """Resident KiB of the brk [heap] mapping: C malloc (bigarray data), apart from mmaps."""
    total, in_heap = 0, False
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                in_heap = line.rstrip().endswith("[heap]")
            elif in_heap and line.startswith("Rss:"):
                total += int(line.split()[1])
    return total


def proc_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


# --- wrk -------------------------------------------------------------------------

def start_wrk(port, conns, seconds, close, out_path):
    argv = ["wrk", "-t1", "-c%d" % conns, "-d%ds" % seconds, "--timeout", "5s",
            "-s", os.path.join(HERE, "mix.lua")]
    if close:
        argv += ["-H", "Connection: close"]
    argv.append("http://%s:%d/" % (HOST, port))
    out = open(out_path, "wb")
    return spawn(argv, stdout=out, stderr=subprocess.STDOUT), argv


def wrk_summary(out_path):
    if not os.path.exists(out_path):
        return None, ""
    with open(out_path, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    m = re.search(r"^SOAK_JSON (\{.*\})$", text, re.M)
    if not m:
        return None, text
    return json.loads(m.group(1)), text


# --- slowloris -------------------------------------------------------------------

class Slowloris(threading.Thread):
    """Keeps [n] connections trickling one header byte per second each.

    The server must close each within its header timeout: it is then replaced.
    A connection the server leaves open longer than timeout + slack is counted
    as [overdue]; any answer other than 408 as [bad_status]."""

    PREFIX = b"GET /612b.html HTTP/1.1\r\nHost: soak\r\nX-Slow: "

    def __init__(self, port, n, stop_at):
        super().__init__(daemon=True)
        self.port, self.n, self.stop_at = port, n, stop_at
        self.opened = self.closed_by_server = self.got_408 = 0
        self.bad_status = self.overdue = self.connect_errors = 0
        self.max_age = 0.0
        self.conns = {}  # socket -> [opened_at, bytes_sent, answer_so_far]

    def open_one(self):
        try:
            s = socket.create_connection((HOST, self.port), timeout=2)
            s.setblocking(False)
            s.send(self.PREFIX)
        except OSError:
            self.connect_errors += 1
            return
        self.opened += 1
        self.conns[s] = [time.time(), len(self.PREFIX), b""]

    def finish(self, s, now):
        opened_at, _, answer = self.conns.pop(s)
        s.close()
        self.closed_by_server += 1
        age = now - opened_at
        self.max_age = max(self.max_age, age)
        if answer.startswith(b"HTTP/1.1 408 "):
            self.got_408 += 1
        elif answer:
            self.bad_status += 1
        if age > HEADER_TIMEOUT + TIMEOUT_SLACK:
            self.overdue += 1

    def run(self):
        last_trickle = 0.0
        started = time.time()
        while not STOP.is_set() and time.time() < self.stop_at:
            # Ramp up over one header timeout, so the connections time out (and
            # are replaced) spread out, not as one burst of n: a burst would
            # raise the server's peak concurrency (old ones still closing, new
            # ones open), hence its slot count and RSS, every cycle.
            ramp = (time.time() - started) / HEADER_TIMEOUT
            want = self.n if ramp >= 1 else int(self.n * ramp)
            while len(self.conns) < want and time.time() < self.stop_at:
                self.open_one()
                if self.connect_errors and len(self.conns) < self.n and self.connect_errors % 50 == 0:
                    time.sleep(0.1)
            socks = list(self.conns)
            if socks:
                r, _, _ = select.select(socks, [], [], 0.2)
            else:
                r = []
                time.sleep(0.2)
            now = time.time()
            for s in r:
                try:
                    d = s.recv(4096)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    d = b""
                if d:
                    self.conns[s][2] += d
                    continue
                self.finish(s, now)
            if now - last_trickle >= 1.0:
                last_trickle = now
                for s in list(self.conns):
                    try:
                        s.send(b"a")
                        self.conns[s][1] += 1
                    except (BlockingIOError, InterruptedError):
                        pass
                    except OSError:
                        self.finish(s, now)
            for s, (opened_at, _, _) in list(self.conns.items()):
                if now - opened_at > HEADER_TIMEOUT + TIMEOUT_SLACK + 5:
                    # Never closed by the server: count it, drop it, keep going.
                    self.finish(s, now)
        for s in list(self.conns):
            s.close()
        self.conns.clear()

    def report(self):
        return {"target_connections": self.n, "opened": self.opened,
                "closed_by_server": self.closed_by_server, "answered_408": self.got_408,
                "other_answers": self.bad_status, "overdue": self.overdue,
                "connect_errors": self.connect_errors, "max_age_s": round(self.max_age, 2)}


# --- malformed requests ----------------------------------------------------------

MALFORMED = [
    ("bare LF line endings", b"GET /612b.html HTTP/1.1\nHost: soak\n\n", 400),
    ("Content-Length + Transfer-Encoding (smuggling)",
     b"POST /612b.html HTTP/1.1\r\nHost: soak\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
     b"0\r\n\r\nGET /612b.html HTTP/1.1\r\nHost: soak\r\n\r\n", 400),
    ("obs-fold", b"GET /612b.html HTTP/1.1\r\nHost: soak\r\nX-A: a\r\n  folded\r\n\r\n", 400),
    ("HTTP/2.0 version", b"GET /612b.html HTTP/2.0\r\nHost: soak\r\n\r\n", 505),
    ("HTTP/3.0 version", b"GET /612b.html HTTP/3.0\r\nHost: soak\r\n\r\n", 505),
    ("HTTP/0.9 version", b"GET /612b.html HTTP/0.9\r\nHost: soak\r\n\r\n", 505),
    ("two-digit minor version", b"GET /612b.html HTTP/1.10\r\nHost: soak\r\n\r\n", 400),
    ("head of 40 KiB", b"GET /612b.html HTTP/1.1\r\nHost: soak\r\nX-Big: " + b"v" * (40 * 1024)
     + b"\r\n\r\n", 431),
    ("200 header fields", b"GET /612b.html HTTP/1.1\r\nHost: soak\r\n"
     + b"".join(b"X-H%d: v\r\n" % i for i in range(200)) + b"\r\n", 431),
    ("target of 9 KiB", b"GET /" + b"a" * (9 * 1024) + b" HTTP/1.1\r\nHost: soak\r\n\r\n", 414),
    ("Content-Length not a number", b"POST /612b.html HTTP/1.1\r\nHost: soak\r\nContent-Length: 1x\r\n\r\na", 400),
    ("Content-Length with a sign", b"POST /612b.html HTTP/1.1\r\nHost: soak\r\nContent-Length: +3\r\n\r\nabc", 400),
    ("Content-Length overflowing",
     b"POST /612b.html HTTP/1.1\r\nHost: soak\r\nContent-Length: 99999999999999999999999\r\n\r\n", 400),
    ("two different Content-Lengths",
     b"POST /612b.html HTTP/1.1\r\nHost: soak\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400),
    ("bad method token", b"G(T /612b.html HTTP/1.1\r\nHost: soak\r\n\r\n", 400),
    ("space before colon", b"GET /612b.html HTTP/1.1\r\nHost : soak\r\n\r\n", 400),
    ("missing Host", b"GET /612b.html HTTP/1.1\r\nAccept: */*\r\n\r\n", 400),
    ("two Host fields", b"GET /612b.html HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
    ("bare CR in a value", b"GET /612b.html HTTP/1.1\r\nHost: soak\r\nX-A: a\rb\r\n\r\n", 400),
    ("NUL in a value", b"GET /612b.html HTTP/1.1\r\nHost: soak\r\nX-A: a\x00b\r\n\r\n", 400),
    ("Transfer-Encoding: gzip, chunked",
     b"POST /612b.html HTTP/1.1\r\nHost: soak\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501),
    ("Transfer-Encoding: chunked, gzip",
     b"POST /612b.html HTTP/1.1\r\nHost: soak\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400),
]


def one_response(data):
    """Status of the single response in [data], or None if it is not exactly one."""
    head, sep, rest = data.partition(b"\r\n\r\n")
    m = re.match(rb"HTTP/1\.1 (\d{3}) ", head)
    if not sep or not m:
        return None
    cl = re.search(rb"\r\ncontent-length: *(\d+)\r?", head + b"\r\n", re.I)
    if cl is None or len(rest) != int(cl.group(1)):
        return None
    return int(m.group(1))


class Malformed(threading.Thread):
    """Sends the MALFORMED list in rotation, one request per new connection."""

    def __init__(self, port, stop_at, pause):
        super().__init__(daemon=True)
        self.port, self.stop_at, self.pause = port, stop_at, pause
        self.sent = self.correct = 0
        self.mismatches = {}  # name -> [count, last detail]

    def run(self):
        i = 0
        while not STOP.is_set() and time.time() < self.stop_at:
            name, raw, want = MALFORMED[i % len(MALFORMED)]
            i += 1
            self.sent += 1
            detail = None
            try:
                s = socket.create_connection((HOST, self.port), timeout=5)
                try:
                    try:
                        s.sendall(raw)
                    except (BrokenPipeError, ConnectionResetError):
                        pass  # the server may answer and close before reading it all
                    data = read_to_eof(s, 5.0)
                finally:
                    s.close()
                got = one_response(data)
                if got != want:
                    detail = "got %r, want %d: %r" % (got, want, data[:120])
            except socket.timeout:
                detail = "connection not closed within 5 s"
            except OSError as e:
                detail = "error %r" % e
            if detail is None:
                self.correct += 1
            else:
                m = self.mismatches.setdefault(name, [0, ""])
                m[0] += 1
                m[1] = detail
            time.sleep(self.pause)

    def report(self):
        return {"sent": self.sent, "answered_correctly": self.correct,
                "mismatches": sum(m[0] for m in self.mismatches.values()),
                "by_case": {k: {"count": v[0], "last": v[1]} for k, v in self.mismatches.items()}}


# --- main --------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=int, default=int(os.environ.get("SOAK_SECONDS", "600")),
                    help="duration of the load (default: $SOAK_SECONDS or 600)")
    ap.add_argument("--warmup", type=int, default=10, help="seconds before the start sample")
    ap.add_argument("--interval", type=int, default=10, help="seconds between samples")
    ap.add_argument("--slowloris", type=int, default=200, help="slowloris connections")
    ap.add_argument("--close-conns", type=int, default=8, help="wrk Connection: close connections")
    ap.add_argument("--httpz", help="httpz binary (default: the dune build)")
    ap.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    ap.add_argument("--io", choices=["uring", "epoll"], help="the server's backend (default: its own default)")
    ap.add_argument("--json", help="also write the report as JSON to this file")
    ap.add_argument("--skip", default="", help="comma-separated generators to leave out, to find which one "
                    "a growth comes from: keepalive, close, slowloris, malformed")
    a = ap.parse_args()
    if a.seconds < a.warmup + a.interval:
        sys.exit("soak: --seconds must be at least warmup + interval (%d)" % (a.warmup + a.interval))
    if shutil.which("wrk") is None:
        sys.exit("soak: wrk not installed (make deps-bench)")

    atexit.register(cleanup)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    hard_limit = a.seconds + 180
    signal.signal(signal.SIGALRM, lambda *_: (log("watchdog: %d s exceeded" % hard_limit),
                                               cleanup(), os._exit(3)))
    signal.alarm(hard_limit)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    httpz = find_httpz(a.httpz)
    tmp = tempfile.mkdtemp(prefix="httpz-soak-")
    TMPDIRS.append(tmp)
    docroot = os.path.join(tmp, "root")
    os.mkdir(docroot)
    make_docroot(docroot)
    port = a.port or free_port()
    argv = [httpz, "serve", "-d", docroot, "-p", str(port), "--host", HOST, "--workers", "1",
            "--stats-token", STATS_TOKEN, "--header-timeout", str(HEADER_TIMEOUT)] + (["--io", a.io] if a.io else [])
    log("server: " + " ".join(argv))
    server = spawn(argv, stdout=open(os.path.join(tmp, "server.log"), "wb"), stderr=subprocess.STDOUT)

    deadline = time.time() + 10
    while True:
        try:
            st, body = http_get(port, "/612b.html", timeout=1)
            if st == 200 and len(body) == 612:
                break
        except OSError:
            pass
        if server.poll() is not None or time.time() > deadline:
            sys.exit("soak: server did not start (exit %r)" % server.poll())
        time.sleep(0.1)
    for name, size in FILES:  # fill caches so the fd baseline includes them
        st, body = http_get(port, "/" + name)
        if st != 200 or len(body) != size:
            sys.exit("soak: GET /%s answered %r with %d bytes" % (name, st, len(body)))
    s0 = stats(port)
    pid = s0["pid"]
    time.sleep(0.5)
    fd_baseline = proc_fds(pid)
    rss_idle = proc_rss_kb(pid)
    log("server pid %d, port %d, idle: %d fds, RSS %d KiB, heap %d words"
        % (pid, port, fd_baseline, rss_idle, s0["heap_words"]))

    t0 = time.time()
    stop_at = t0 + a.seconds
    wrk_ka_out = os.path.join(tmp, "wrk-keepalive.txt")
    wrk_cl_out = os.path.join(tmp, "wrk-close.txt")
    skip = set(x for x in a.skip.split(",") if x)
    unknown = skip - {"keepalive", "close", "slowloris", "malformed"}
    if unknown:
        sys.exit("soak: unknown --skip %s" % ",".join(sorted(unknown)))
    wrk_ka = None if "keepalive" in skip else start_wrk(port, 64, a.seconds, False, wrk_ka_out)[0]
    wrk_cl = None if "close" in skip else start_wrk(port, a.close_conns, a.seconds, True, wrk_cl_out)[0]
    slow = Slowloris(port, 0 if "slowloris" in skip else a.slowloris, stop_at)
    bad = Malformed(port, stop_at if "malformed" not in skip else t0, pause=0.02)
    slow.start()
    bad.start()
    log("load started for %d s: wrk keep-alive c64, wrk close c%d, slowloris %d, malformed loop"
        % (a.seconds, a.close_conns, a.slowloris))

    samples = []
    problems = []
    next_sample = t0 + a.warmup
    while next_sample <= stop_at + 0.5:
        time.sleep(max(0.0, next_sample - time.time()))
        if server.poll() is not None:
            problems.append("server exited during the soak (status %r)" % server.returncode)
            break
        try:
            st = stats(port)
            smp = {"t": round(time.time() - t0, 1), "rss_kb": proc_rss_kb(pid), "fds": proc_fds(pid),
                   "brk_kb": proc_brk_kb(pid),
                   "heap_words": st["heap_words"], "requests": st["requests"],
                   "connections": st.get("connections"), "minor_collections": st["minor_collections"],
                   "major_collections": st["major_collections"], "slots_created": st.get("slots_created")}
        except (OSError, ValueError, RuntimeError) as e:
            problems.append("sample at %.0f s failed: %r" % (time.time() - t0, e))
            next_sample += a.interval
            continue
        samples.append(smp)
        log("t=%5.1fs rss=%d KiB (malloc %d) fds=%d heap=%d words requests=%d conns=%s slots=%s"
            % (smp["t"], smp["rss_kb"], smp["brk_kb"], smp["fds"], smp["heap_words"], smp["requests"],
               smp["connections"], smp["slots_created"]))
        next_sample += a.interval

    # Stop: wrk ends by itself (-d); the threads stop at stop_at.
    for p, name in ((wrk_ka, "keep-alive"), (wrk_cl, "close")):
        if p is None:
            continue
        try:
            p.wait(timeout=max(1.0, stop_at - time.time()) + 15)
        except subprocess.TimeoutExpired:
            problems.append("wrk %s did not stop by itself" % name)
            kill_group(p)
            p.wait()
    STOP.set()
    slow.join(timeout=15)
    bad.join(timeout=15)

    # fds back to baseline once every client has gone (closes may linger briefly).
    fd_end = None
    server_alive = server.poll() is None
    if server_alive:
        wait_until = time.time() + 15
        while True:
            fd_end = proc_fds(pid)
            if fd_end <= fd_baseline or time.time() > wait_until:
                break
            time.sleep(0.25)
        try:
            st, body = http_get(port, "/16k.bin")
            final_ok = st == 200 and len(body) == 16 * 1024
        except OSError:
            final_ok = False
        s_end = stats(port) if final_ok else None
    else:
        final_ok, s_end = False, None

    # --- report ---
    ka, ka_text = wrk_summary(wrk_ka_out)
    cl, cl_text = wrk_summary(wrk_cl_out)
    checks = []
    notes = []

    def check(name, ok, detail):
        checks.append((name, bool(ok), detail))

    for label, w, text in (("keep-alive", ka, ka_text), ("close", cl, cl_text)):
        if ("keepalive" if label == "keep-alive" else "close") in skip:
            continue
        if w is None:
            check("wrk %s ran" % label, False, "no summary; output: %r" % text[-400:])
            continue
        e = w["errors"]
        errs = e["connect"] + e["read"] + e["write"] + e["timeout"]
        check("wrk %s: requests > 0" % label, w["requests"] > 0, "%d requests" % w["requests"])
        check("wrk %s: 0 socket errors" % label, errs == 0,
              "connect %d, read %d, write %d, timeout %d" % (e["connect"], e["read"], e["write"], e["timeout"]))
        check("wrk %s: 0 non-2xx" % label, w["non2xx"] == 0 and e["status"] == 0,
              "non-2xx %d (wrk status errors %d)" % (w["non2xx"], e["status"]))
    mr = bad.report()
    check("malformed: every request got its status and a close",
          ("malformed" in skip or mr["sent"] > 0) and mr["mismatches"] == 0,
          "%d sent, %d correct" % (mr["sent"], mr["answered_correctly"]))
    sr = slow.report()
    check("slowloris: every connection answered 408 and closed within %d + %.0f s"
          % (HEADER_TIMEOUT, TIMEOUT_SLACK),
          sr["overdue"] == 0 and sr["other_answers"] == 0 and sr["connect_errors"] == 0
          and (a.seconds < HEADER_TIMEOUT + TIMEOUT_SLACK or "slowloris" in skip or sr["closed_by_server"] >= sr["target_connections"]),
          "%d opened, %d closed by the server (%d with 408), max age %.1f s, %d overdue, %d other answers, "
          "%d connect errors" % (sr["opened"], sr["closed_by_server"], sr["answered_408"], sr["max_age_s"],
                                  sr["overdue"], sr["other_answers"], sr["connect_errors"]))
    if len(samples) >= 2:
        a0, a1 = samples[0], samples[-1]
        rss_lim = a0["rss_kb"] * 1.1 + RSS_SLACK_KB
        heap_lim = a0["heap_words"] * 1.1 + HEAP_SLACK_WORDS
        slot_lim = rss_idle + (a1["slots_created"] or 0) * SLOT_KB + RSS_SLACK_KB
        if a1["rss_kb"] <= rss_lim:
            check("RSS flat", True, "%d -> %d KiB (limit start x 1.1 + %d = %d)"
                  % (a0["rss_kb"], a1["rss_kb"], RSS_SLACK_KB, rss_lim))
        else:
            check("RSS flat or within the slot buffers", a1["rss_kb"] <= slot_lim,
                  "%d -> %d KiB: above start x 1.1 + %d = %d; bound idle %d + %d slots x %d + %d = %d KiB"
                  % (a0["rss_kb"], a1["rss_kb"], RSS_SLACK_KB, rss_lim, rss_idle, a1["slots_created"] or 0,
                     SLOT_KB, RSS_SLACK_KB, slot_lim))
            notes.append("RSS grew beyond start x 1.1: slots %s -> %s, malloc'd %d -> %d KiB (see SLOT_KB)"
                         % (a0["slots_created"], a1["slots_created"], a0["brk_kb"], a1["brk_kb"]))
        check("heap flat", a1["heap_words"] <= heap_lim,
              "%d -> %d words (limit %d)" % (a0["heap_words"], a1["heap_words"], heap_lim))
    else:
        check("samples", False, "%d samples, need 2" % len(samples))
    check("fds back to baseline", fd_end is not None and fd_end <= fd_baseline,
          "baseline %d (idle, before load), after load %r" % (fd_baseline, fd_end))
    check("server alive and serving after the soak", server_alive and final_ok,
          "alive %s, final GET ok %s" % (server_alive, final_ok))
    for p in problems:
        check("harness", False, p)

    served = (s_end["requests"] - s0["requests"]) if s_end else (
        samples[-1]["requests"] - s0["requests"] if samples else 0)
    failed = [c for c in checks if not c[1]]
    out = []
    out.append("httpz soak report: %d s of load (%s)" % (a.seconds, time.strftime("%Y-%m-%d %H:%M:%S %Z")))
    out.append("  server        %s (pid %d)" % (" ".join(argv[1:]), pid))
    out.append("  requests served (server counter): %d  (%.0f req/s)" % (served, served / a.seconds))
    for label, w in (("keep-alive c64", ka), ("close c%d" % a.close_conns, cl)):
        if w:
            e = w["errors"]
            out.append("  wrk %-14s %9d requests, %6.0f req/s, errors connect %d read %d write %d timeout %d, "
                       "non-2xx %d" % (label, w["requests"], w["requests"] / max(w["duration_s"], 1e-9),
                                       e["connect"], e["read"], e["write"], e["timeout"], w["non2xx"]))
    out.append("  malformed     %d sent, %d answered correctly, %d mismatches" %
               (mr["sent"], mr["answered_correctly"], mr["mismatches"]))
    for k, v in mr["by_case"].items():
        out.append("      %s: %d, last: %s" % (k, v["count"], v["last"]))
    out.append("  slowloris     %d connections held, %d opened, %d closed by the server (%d with 408), "
               "max age %.1f s" % (sr["target_connections"], sr["opened"], sr["closed_by_server"],
                                   sr["answered_408"], sr["max_age_s"]))
    if samples:
        a0, a1 = samples[0], samples[-1]
        out.append("  %-22s %12s %12s" % ("", "start (t=%.0fs)" % a0["t"], "end (t=%.0fs)" % a1["t"]))
        out.append("  %-22s %12d %12d" % ("RSS KiB", a0["rss_kb"], a1["rss_kb"]))
        out.append("  %-22s %12d %12d" % ("  of which malloc KiB", a0["brk_kb"], a1["brk_kb"]))
        out.append("  %-22s %12d %12d" % ("heap_words", a0["heap_words"], a1["heap_words"]))
        out.append("  %-22s %12s %12s" % ("slots (peak conns)", a0["slots_created"], a1["slots_created"]))
        out.append("  %-22s %12d %12d" % ("fds under load", a0["fds"], a1["fds"]))
        out.append("  %-22s %12d %12s" % ("fds idle", fd_baseline, fd_end))
        out.append("  samples (t s: RSS KiB / fds / heap words / requests): " + ", ".join(
            "%.0f: %d/%d/%d/%d" % (s["t"], s["rss_kb"], s["fds"], s["heap_words"], s["requests"])
            for s in samples))
    for name, ok, detail in checks:
        out.append("  [%s] %s: %s" % ("ok" if ok else "FAIL", name, detail))
    for note in notes:
        out.append("  note: " + note)
    out.append("VERDICT: %s" % ("PASS (flat: RSS, heap and fds; 0 errors)" if not failed and not notes
                                else "PASS (0 errors; heap and fds flat; RSS within the slot-buffer bound)"
                                if not failed
                                else "FAIL (%d of %d checks)" % (len(failed), len(checks))))
    print("\n".join(out))
    sys.stdout.flush()
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"schema": "httpz-soak/1", "seconds": a.seconds, "requests_served": served,
                       "wrk_keepalive": ka, "wrk_close": cl, "malformed": mr, "slowloris": sr,
                       "samples": samples, "fd_baseline": fd_baseline, "fd_end": fd_end,
                       "checks": [{"name": n, "ok": o, "detail": d} for n, o, d in checks]}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
