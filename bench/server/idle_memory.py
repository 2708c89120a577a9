#!/usr/bin/env python3
"""Memory per idle keep-alive connection, and a fresh client's wait.

    bench/server/idle_memory.py [N] [EXE ...]

For each httpz binary (default: the current build), starts `EXE serve`
with one worker on 127.0.0.1, opens N keep-alive connections (default
10,000) that each make one request and then stay idle, and reports how much
the worker's RSS grew per connection, then how long a fresh client waits
for an answer. Everything stops by itself; only 127.0.0.1 is used.
"""

import os
import resource
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def one(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n")
    s.recv(4096)
    return s


def measure(exe, n, doc):
    port = free_port()
    p = subprocess.Popen([exe, "serve", "-d", doc, "-p", str(port), "--host", "127.0.0.1",
                          "--workers", "1", "--max-connections", str(n + 100)],
                         stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                one(port).close()
                break
            except OSError:
                time.sleep(0.05)
        warm = [one(port) for _ in range(10)]
        before = rss_kib(p.pid)
        socks = [one(port) for _ in range(n)]
        time.sleep(0.5)
        after = rss_kib(p.pid)
        t0 = time.monotonic()
        one(port).close()
        dt = time.monotonic() - t0
        print("%s: %d idle keep-alive connections: RSS %d -> %d KiB, %.0f bytes each; "
              "a fresh request answered in %.1f ms"
              % (exe, n, before, after, (after - before) * 1024.0 / n, dt * 1000), flush=True)
        for s in socks + warm:
            s.close()
    finally:
        p.terminate()
        p.wait(timeout=15)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    exes = sys.argv[2:] or [os.path.join(ROOT, "_build", "install", "default", "bin", "httpz")]
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if n + 200 > hard:
        sys.exit("need %d descriptors, the limit is %d" % (n + 200, hard))
    with tempfile.TemporaryDirectory() as doc:
        with open(os.path.join(doc, "index.html"), "w") as f:
            f.write("<p>idle</p>\n")
        for exe in exes:
            measure(exe, n, doc)


if __name__ == "__main__":
    main()
