#!/usr/bin/env python3
"""Instructions per request of `httpz serve` builds, under callgrind.

    bench/server/instructions.py [--file BYTES] [--h2c] LABEL=EXE[:ARG,ARG...] [...]
    bench/server/instructions.py --program PATH LABEL=EXE[:ARG,ARG...] [...]

For each build, two runs of one worker under `valgrind --tool=callgrind`,
one answering N1 and one N2 keep-alive GETs of a BYTES-long .html file
(default 612) from one connection; (Ir(N2) - Ir(N1)) / (N2 - N1) is the
server's user-space instructions per request, start-up and shutdown
cancelled out. Unlike req/s on this shared 2-core machine, the count does
not move with the load of other work (two runs of one build agree to the
instruction), so it is the tool for "does this change cost anything on
the hot path": compare the build before and after, options on and off.

    bench/server/instructions.py base=/tmp/httpz-base new=_build/install/default/bin/httpz \\
        'log=_build/install/default/bin/httpz:--access-log,/dev/null'

With --h2c, the requests are HTTP/2 streams by prior knowledge: `h2load -c 4
-m 10 -n N` (4 connections, 10 streams in flight on each), so the count is
the server's cost per stream as the HTTP/2 benchmark loads it.

A spec whose EXE is `h2o` runs h2o 2.2.5 (one thread, the same file)
instead of `httpz serve`: `h2o=h2o` beside the builds gives h2o's own
instructions per request (its code, libc and OpenSSL alike) under the same
load, e.g. `bench/server/instructions.py --h2c httpz=EXE h2o=h2o`.

With --program PATH, each EXE is a program of its own that takes `-p PORT`
(an example or a bench server) and the requests are GETs of PATH: the
router's cost per request, say, is

    bench/server/instructions.py --program /todos/42 \\
        routed=_build/default/bench/server/todos_httpz.exe \\
        hand=_build/default/bench/server/todos_httpz.exe:--hand-match
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

N1, N2 = 2000, 22000


def get_h1(port, exe, path, n):
    """[n] keep-alive GETs of [path] on one HTTP/1.1 connection."""
    c = None
    for _ in range(600):
        try:
            c = socket.create_connection(("127.0.0.1", port))
            break
        except OSError:
            time.sleep(0.1)
    if c is None:
        sys.exit("%s did not start" % exe)
    req = b"GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path.encode()
    buf = b""
    for _ in range(n):
        c.sendall(req)
        while True:
            i = buf.find(b"\r\n\r\n")
            m = re.search(rb"(?i)\r\ncontent-length: *(\d+)", buf[:i]) if i >= 0 else None
            size = int(m.group(1)) if m else 0
            if i >= 0 and len(buf) >= i + 4 + size:
                buf = buf[i + 4 + size:]
                break
            more = c.recv(65536)
            if not more:
                sys.exit("%s closed the connection" % exe)
            buf += more
    c.close()


def get_h2c(port, exe, path, n):
    """[n] GETs of [path] as HTTP/2 streams (h2c), by h2load."""
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            break
        except OSError:
            time.sleep(0.1)
    else:
        sys.exit("%s did not start" % exe)
    r = subprocess.run(["h2load", "-c", "4", "-m", "10", "-n", str(n),
                        "http://127.0.0.1:%d%s" % (port, path)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    out = r.stdout.decode("utf-8", "replace")
    if "%d succeeded" % n not in out:
        sys.exit("h2load against %s: not every stream succeeded:\n%s" % (exe, out[-800:]))


def h2o_conf(docroot, port):
    """h2o serving [docroot] on [port] with one thread (as bench_h2.py runs
    it). As root it would switch to nobody, and callgrind, writing its
    counts as that user at exit, could not: it stays root."""
    conf = os.path.join(os.path.dirname(docroot), "h2o-%d.conf" % port)
    with open(conf, "w") as f:
        f.write("%slisten:\n  host: 127.0.0.1\n  port: %d\nnum-threads: 1\n"
                "error-log: /dev/null\nhosts:\n  default:\n    paths:\n      /:\n"
                "        file.dir: %s\n" % ("user: root\n" if os.geteuid() == 0 else "", port, docroot))
    return conf


def run(exe, extra, docroot, path, n, h2c=False):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    out = tempfile.mktemp(prefix="httpz-callgrind.")
    if os.path.basename(exe) == "h2o":
        if docroot is None:
            sys.exit("h2o serves the file of the default mode, not a --program path")
        argv = [exe, "-c", h2o_conf(docroot, port)]
    else:
        argv = ([exe, "-p", str(port)] if docroot is None
                else [exe, "serve", "-d", docroot, "-p", str(port), "--workers", "1"])
    p = subprocess.Popen(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + argv + extra,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        (get_h2c if h2c else get_h1)(port, exe, path, n)
    finally:
        p.send_signal(signal.SIGTERM)
        err = p.communicate(timeout=300)[1].decode("utf-8", "replace")
        if os.path.exists(out):
            os.unlink(out)
    m = re.search(r"Collected : (\d+)", err)
    if not m:
        sys.exit("no callgrind total for %s:\n%s" % (exe, err[-1000:]))
    return int(m.group(1))


def main():
    args = sys.argv[1:]
    if not shutil.which("h2load") and "--h2c" in args:
        sys.exit("h2load is not installed (scripts/deps.sh bench)")
    size = 612
    program = None
    h2c = False
    if args[:1] == ["--file"]:
        size, args = int(args[1]), args[2:]
    if args[:1] == ["--h2c"]:
        h2c, args = True, args[1:]
    if args[:1] == ["--program"]:
        program, args = args[1], args[2:]
    if not args or not shutil.which("valgrind"):
        sys.exit(__doc__ if args else "valgrind is not installed (scripts/deps.sh bench)")
    top = tempfile.mkdtemp(prefix="httpz-instr-")
    docroot = os.path.join(top, "doc")
    os.mkdir(docroot)
    try:
        line = b"httpz benchmark document 0123456789abcdefghijklmnopqrstuvwxyz\n"
        with open(os.path.join(docroot, "f.html"), "wb") as f:
            f.write((line * (size // len(line) + 1))[:size])
        first = None
        for spec in args:
            label, _, rest = spec.partition("=")
            exe, _, extra = rest.partition(":")
            extra = [a for a in extra.split(",") if a]
            where = (None, program) if program else (docroot, "/f.html")
            a = run(exe, extra, where[0], where[1], N1, h2c)
            b = run(exe, extra, where[0], where[1], N2, h2c)
            per = (b - a) / (N2 - N1)
            first = first or per
            print("%-10s %8.0f instructions/request  (%+.2f%% against %s)" % (
                label, per, 100 * (per / first - 1), args[0].partition("=")[0]), flush=True)
    finally:
        shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    main()
