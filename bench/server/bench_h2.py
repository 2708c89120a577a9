#!/usr/bin/env python3
"""HTTP/2 load benchmark: httpz serve against h2o and nginx, over TLS (h2 by
ALPN) and over cleartext (h2c with prior knowledge).

Each server runs with one worker pinned to SERVER_CPU (as in
bench_servers.py); `h2load -t1 -c64 -m M` runs pinned to CLIENT_CPU. For
every transport the three servers are started once and serve every case of
that transport; the cases (612 B and 16 KiB files, `-m 10` and `-m 1`) run in
interleaved rounds: per round, each case once against every server, the
server order rotating, so the machine's drift lands on all alike. Server CPU
per request is the server's process tree's utime+stime over the timed part
of each run (h2load's warm-up is excluded) divided by the requests h2load
counted as succeeded. Multiplexing makes the per-request cost small, so the
median of ROUNDS runs is reported (the machine's noise is about ±5 % at 7).

Also: memory per idle HTTP/2 connection (N connections that completed the
preface and SETTINGS exchange and one request, then stay silent), as the
growth of the server tree's RSS divided by N.

Results go to bench/results/h2.json (schema "httpz-bench-h2/1");
bench/report.py makes them a table. Usage:
  bench_h2.py [--rounds 7] [--duration 1.0] [--idle 1000] [--out FILE]
              [--servers httpz,h2o,nginx] [--transports tls,h2c]
"""

import argparse
import json
import os
import re
import socket
import ssl
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_servers as B  # noqa: E402

SCHEMA = "httpz-bench-h2/1"
CASES = [("612b", 10), ("16k", 10), ("612b", 1), ("16k", 1)]


class HttpzH2(B.Httpz):
    """httpz serve: HTTP/2 by ALPN on its TLS listener, h2c by the client
    preface on its plain one; nothing to configure."""


class NginxH2(B.Nginx):
    """nginx with `http2` on its listener (h2c without TLS: prior knowledge
    only, which is what h2load speaks)."""

    def command(self, tmp, docroot, port, workers, stats, tls=None):
        argv = B.Nginx.command(self, tmp, docroot, port, workers, stats, tls)
        conf = os.path.join(tmp, "nginx.conf")
        with open(conf) as f:
            text = f.read()
        text = re.sub(r"(listen 127\.0\.0\.1:\d+[^;]*);", r"\1 http2;", text)
        # The default of 1000 requests per HTTP/2 connection would make a run
        # partly measure reconnects.
        text = text.replace("keepalive_requests 1000000000;",
                            "keepalive_requests 1000000000;\n    http2_max_requests 1000000000;")
        with open(conf, "w") as f:
            f.write(text)
        return argv


class H2oH2(B.H2o):
    """h2o: h2 by ALPN on TLS, h2c by prior knowledge on a plain listener,
    both by default."""


SERVERS = {"httpz": HttpzH2(), "h2o": H2oH2(), "nginx": NginxH2()}


def h2_get(port, path, tls):
    """One request over HTTP/2 with curl; (status, body) or raises OSError."""
    argv = ["curl", "-sk", "--max-time", "3", "-o", "-", "-w", "\n%{http_code} %{http_version}",
            ("--http2" if tls else "--http2-prior-knowledge"), B.url(port, path, tls)]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=5)
    body, _, tail = p.stdout.rpartition(b"\n")
    parts = tail.decode().split()
    if p.returncode != 0 or len(parts) != 2:
        raise OSError("curl failed (%d)" % p.returncode)
    if parts[1] != "2":
        raise OSError("answered over HTTP/%s, not HTTP/2" % parts[1])
    return int(parts[0]), body


def start(procs, server, docroot, tls, expect_path, expect_body):
    tmp = tempfile.mkdtemp(prefix="httpz-bench-h2-%s-" % server.name)
    os.chmod(tmp, 0o755)
    port = B.free_port()
    argv = server.command(tmp, docroot, port, 1, False, tls)
    out = open(os.path.join(tmp, "stdout.log"), "w")
    proc = procs.spawn(B.pinned(B.SERVER_CPU, argv), stdout=out, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL, cwd=tmp)
    out.close()
    run = B.Running(proc, port, tmp, server, tls)
    deadline = time.monotonic() + 15
    last = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            last = "exited with status %s" % proc.returncode
            break
        try:
            status, body = h2_get(port, expect_path, bool(tls))
            if status == 200 and body == expect_body:
                return run, None
            last = "GET %s over h2: %d, %d bytes" % (expect_path, status, len(body))
        except (OSError, subprocess.SubprocessError) as e:
            last = str(e)
        time.sleep(0.1)
    err = B.server_logs(run)
    B.stop_server(procs, run)
    return None, "did not serve HTTP/2: %s%s" % (last, ("\n" + err) if err else "")


def h2load(procs, run, path, streams, duration, warmup):
    argv = ["h2load", "-t1", "-c64", "-m%d" % streams, "-D", B.ms(duration),
            "--warm-up-time", B.ms(warmup), B.url(run.port, path, bool(run.tls))]
    out, rc, cpu = B.loadgen_server_cpu(procs, argv, run.proc.pid, warmup, duration)
    res = B.parse_h2load(out, duration)
    if res is None or cpu is None:
        return {"error": "h2load failed (exit %d): %s" % (rc, out.strip().splitlines()[-3:])}
    res["server_cpu_s"] = cpu
    res["cpu_us_per_request"] = (cpu * 1e6 / res["requests"]) if cpu and res["requests"] else None
    return res


PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
EMPTY_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
SETTINGS_ACK = b"\x00\x00\x00\x04\x01\x00\x00\x00\x00"
# HEADERS on stream 1, END_STREAM|END_HEADERS: :method GET (static 2),
# :scheme (https 7 / http 6), :path / (static 4), :authority "b" (literal, 1).
def get_headers(tls):
    block = bytes([0x82, 0x87 if tls else 0x86, 0x84, 0x41, 0x01]) + b"b"
    return bytes([0, 0, len(block), 0x01, 0x05, 0, 0, 0, 1]) + block


def idle_connection(port, tls, ctx):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    if tls:
        s = ctx.wrap_socket(s, server_hostname="localhost")
        if s.selected_alpn_protocol() != "h2":
            raise OSError("ALPN chose %r" % s.selected_alpn_protocol())
    s.sendall(PREFACE + EMPTY_SETTINGS + SETTINGS_ACK + get_headers(tls))
    got = b""
    deadline = time.monotonic() + 5
    # Read until the response's DATA with END_STREAM (or HEADERS with it).
    while time.monotonic() < deadline:
        chunk = s.recv(65536)
        if not chunk:
            raise OSError("closed")
        got += chunk
        off = 0
        done = False
        while off + 9 <= len(got):
            n = int.from_bytes(got[off:off + 3], "big")
            kind, flags = got[off + 3], got[off + 4]
            if kind in (0, 1) and flags & 1:
                done = True
            off += 9 + n
        if done:
            return s
    raise OSError("no response")


def idle_memory(procs, server, docroot, tls, n, expect_path, expect_body):
    run, err = start(procs, server, docroot, tls, expect_path, expect_body)
    if run is None:
        return {"error": err}
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["h2"])
    held = []
    try:
        held = [idle_connection(run.port, tls, ctx) for _ in range(20)]
        time.sleep(0.3)
        before = B.tree_rss_kib(run.proc.pid)
        held += [idle_connection(run.port, tls, ctx) for _ in range(n)]
        time.sleep(0.5)
        after = B.tree_rss_kib(run.proc.pid)
        return {"connections": n, "rss_before_kib": before, "rss_after_kib": after,
                "kib_per_connection": (after - before) / n}
    except OSError as e:
        return {"error": "after %d connections: %s" % (len(held), e)}
    finally:
        for s in held:
            try:
                s.close()
            except OSError:
                pass
        B.stop_server(procs, run)


def write_files(docroot):
    """The cases' files (612 B, 16 KiB) in [docroot], readable by servers
    that drop privileges: {key: (URL path, body)}."""
    os.chmod(docroot, 0o755)
    bodies = {}
    for key in ("612b", "16k"):
        name, size = B.FILES[key]
        body = bytes((i * 7 + 13) % 251 for i in range(size))
        with open(os.path.join(docroot, name), "wb") as f:
            f.write(body)
        os.chmod(os.path.join(docroot, name), 0o644)
        bodies[key] = ("/" + name, body)
    return bodies


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--duration", type=float, default=1.0)
    ap.add_argument("--warmup", type=float, default=0.3)
    ap.add_argument("--idle", type=int, default=1000)
    ap.add_argument("--servers", default="httpz,h2o,nginx")
    ap.add_argument("--transports", default="tls,h2c")
    ap.add_argument("--out", default=os.path.join(B.ROOT, "bench", "results", "h2.json"))
    ap.add_argument("--pidfile")
    args = ap.parse_args()
    B.raise_nofile()
    procs = B.Procs(args.pidfile)
    docroot = tempfile.mkdtemp(prefix="httpz-bench-h2-doc-")
    bodies = write_files(docroot)
    workdir = tempfile.mkdtemp(prefix="httpz-bench-h2-tls-")
    os.chmod(workdir, 0o755)
    tls_pair = B.tls_files(workdir)
    names = [s for s in args.servers.split(",") if s]
    result = {"schema": SCHEMA, "machine": B.machine_info(),
              "config": {"rounds": args.rounds, "duration_s": args.duration,
                         "warmup_s": args.warmup, "connections": 64, "h2load_threads": 1,
                         "server_cpu": B.SERVER_CPU, "client_cpu": B.CLIENT_CPU,
                         "command": "h2load -t1 -c64 -m M -D %s --warm-up-time %s URL"
                                    % (B.ms(args.duration), B.ms(args.warmup))},
              "versions": {}, "cases": [], "idle": [], "problems": []}
    try:
        for transport in [t for t in args.transports.split(",") if t]:
            tls = tls_pair if transport == "tls" else None
            runs = {}
            for name in names:
                server = SERVERS[name]
                ok, why = server.available()
                if not ok:
                    result["problems"].append("%s: %s" % (name, why))
                    continue
                result["versions"][name] = server.version()
                run, err = start(procs, server, docroot, tls, *bodies["612b"])
                if run is None:
                    result["problems"].append("%s over %s: %s" % (name, transport, err))
                    continue
                runs[name] = run
            try:
                samples = {(f, m, s): [] for f, m in CASES for s in runs}
                order = list(runs)
                for rnd in range(args.rounds):
                    for f, m in CASES:
                        for s in order:
                            r = h2load(procs, runs[s], bodies[f][0], m, args.duration, args.warmup)
                            r["round"] = rnd
                            samples[(f, m, s)].append(r)
                        order = order[1:] + order[:1]
                    B.log("h2 %s: round %d/%d done" % (transport, rnd + 1, args.rounds))
                for f, m in CASES:
                    for s in runs:
                        rs = samples[(f, m, s)]
                        good = [r for r in rs if "error" not in r]
                        errs = sum(sum(v or 0 for v in r["errors"].values()) for r in good)
                        result["cases"].append({
                            "transport": transport, "file": f, "bytes": len(bodies[f][1]),
                            "streams": m, "server": s, "runs": rs,
                            "rps": B.summarise([r["rps"] for r in good]),
                            "cpu_us_per_request": B.summarise(
                                [r["cpu_us_per_request"] for r in good]),
                            "errors": errs + (len(rs) - len(good))})
            finally:
                for run in runs.values():
                    B.stop_server(procs, run)
            if args.idle > 0:
                for name in names:
                    if name in result["versions"]:
                        r = idle_memory(procs, SERVERS[name], docroot, tls, args.idle,
                                        *bodies["612b"])
                        r.update(server=name, transport=transport)
                        result["idle"].append(r)
    finally:
        procs.stop_all()
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    for c in result["cases"]:
        B.log("%-4s %-5s -m%-2d %-6s %9.0f req/s %6.2f us/req  errors %d" % (
            c["transport"], c["file"], c["streams"], c["server"],
            (c["rps"] or {}).get("median", 0), (c["cpu_us_per_request"] or {}).get("median") or 0,
            c["errors"]))
    for r in result["idle"]:
        B.log("idle %s %s: %s" % (r["transport"], r["server"],
                                  "%.1f KiB/conn" % r["kib_per_connection"]
                                  if "kib_per_connection" in r else r.get("error")))
    for p in result["problems"]:
        B.log("problem: " + p)


if __name__ == "__main__":
    main()
