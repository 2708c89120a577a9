#!/usr/bin/env python3
"""Server load benchmarks: httpz serve against nginx, lighttpd, h2o and cohttp-lwt-unix.

For every case this script writes an equivalent configuration of each server
into a temporary directory (1 worker, sendfile on where the server has it,
access log off, keep-alive on with timeouts and per-connection request limits
far above what a run needs), starts them all pinned to one core on loopback
ports, checks that each serves the test file byte for byte, warms each up,
then runs `wrk` pinned to another core in rounds, once against every server
per round with the order rotating (interleaved, so the machine's drift lands
on all servers alike and runs of one round compare pairwise), then (pinned
cases only) one `h2load --h1` run on each server instance as a second load
generator, and stops them. Results (every run with its round, median, min,
max, errors, CPU use of the load generator and of the server) go to
bench/results/servers.json; bench/report.py turns them into tables and
charts.

It also measures GC behaviour under load for the servers that report
Gc statistics over HTTP (httpz with --stats-token at /__httpz/stats, the cohttp peer
at /__stats): collections and words allocated per 100,000 requests, read
around the wrk runs of the same instance.

Standard library only. Usage:
  bench_servers.py --mode quick|full [--out FILE] [--servers a,b] [--cases a,b]
  bench_servers.py --check            # start each server, verify, stop; no timing
See bench/README.md for what each case measures and the JSON schema.
"""

import argparse
import datetime
import http.client
import json
import os
import platform
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# The contract is _build/default/bin/httpz.exe; `dune build @install` also
# provides the public name under _build/install, whatever the stanza's name.
HTTPZ_CANDIDATES = [os.path.join(ROOT, "_build", "default", "bin", "httpz.exe"),
                    os.path.join(ROOT, "_build", "install", "default", "bin", "httpz")]


def httpz_exe():
    # HTTPZ_EXE=path benchmarks another build (e.g. an older commit's).
    if os.environ.get("HTTPZ_EXE"):
        return os.path.abspath(os.environ["HTTPZ_EXE"])
    for c in HTTPZ_CANDIDATES:
        if os.path.exists(c):
            return c
    return None


COHTTP_EXE = os.path.join(ROOT, "_build", "default", "bench", "server", "cohttp_static.exe")
# The routed-JSON case (todos_c64): GET /todos/:id from a program, not a file.
TODOS_HTTPZ_EXE = os.path.join(ROOT, "_build", "default", "bench", "server", "todos_httpz.exe")
TODOS_COHTTP_EXE = os.path.join(ROOT, "_build", "default", "bench", "server", "cohttp_todos.exe")
TODOS_PATH = "/todos/42"
TODOS_BODY = b'{"id":42,"title":"todo number 42","done":false}'
SCHEMA = "httpz-bench-servers/1"

SERVER_CPU = os.environ.get("BENCH_SERVER_CPU", "0")
CLIENT_CPU = os.environ.get("BENCH_CLIENT_CPU", "1")
# wrk above this share of one core is the bottleneck, not the server.
SATURATED = 0.90

# Test documents, generated at run time into the temporary docroot. 612 bytes
# is the size of nginx's default index.html, the usual "hello world" of
# static-file benchmarks.
FILES = {
    "612b": ("612b.html", 612),
    "16k": ("16k.bin", 16 * 1024),
    "16k_html": ("16k.html", 16 * 1024),
    "1m": ("1m.bin", 1024 * 1024),
}

ALL_SERVERS = ["httpz", "httpz-epoll", "nginx", "lighttpd", "h2o", "cohttp"]
NATIVE = ["httpz", "httpz-epoll", "nginx", "lighttpd", "h2o"]
# Servers with HTTPS set up here (lighttpd needs a module Debian packages
# apart, cohttp has none). No epoll column: TLS connections run on
# readiness on both backends.
TLS_SERVERS = ["httpz", "nginx", "h2o"]
# Application servers: programs answering GET /todos/:id (todos_c64), not
# file servers, so --check and the file cases leave them out.
APP_SERVERS = ["httpz-todos", "httpz-todos-hand", "cohttp-todos"]

# Every case: which file, how many connections, extra request headers, how many
# server workers, whether the server is pinned to SERVER_CPU, which servers.
CASES = {
    "612b_c64": dict(file="612b", conns=64, headers=[], workers=1, pin=True,
                     servers=ALL_SERVERS,
                     desc="612 B file, 64 keep-alive connections"),
    "16k_c64": dict(file="16k", conns=64, headers=[], workers=1, pin=True,
                    servers=NATIVE, desc="16 KiB file, 64 keep-alive connections"),
    # Files this large go out with sendfile on both backends: no epoll column.
    "1m_c64": dict(file="1m", conns=64, headers=[], workers=1, pin=True,
                   servers=["httpz", "nginx", "lighttpd", "h2o"],
                   desc="1 MiB file, 64 keep-alive connections"),
    "612b_c1000": dict(file="612b", conns=1000, headers=[], workers=1, pin=True,
                       servers=NATIVE, desc="612 B file, 1000 keep-alive connections"),
    "612b_close": dict(file="612b", conns=64, headers=["Connection: close"], workers=1,
                       pin=True, servers=NATIVE,
                       desc="612 B file, 64 connections, Connection: close (one request per connection)"),
    "612b_c64_w2": dict(file="612b", conns=64, headers=[], workers=2, pin=False,
                        servers=["httpz", "nginx"],
                        desc="612 B file, 64 connections, 2 server workers, server not pinned"),
    # What on-the-fly compression costs (issue 16): the same HTML file to a
    # client that accepts gzip, from httpz without compression, httpz
    # --compress (gzip made once, served from the cache) and nginx with
    # gzip on at the same level (compressed per response). Shorter than the
    # other cases (runs, duration) and without h2load, for the time budget.
    "16k_gzip": dict(file="16k_html", conns=64, headers=["Accept-Encoding: gzip"], workers=1,
                     pin=True, servers=["httpz", "httpz-gzip", "nginx-gzip"], compression=True,
                     runs=3, duration=2, no_h2load=True,
                     desc="16 KiB HTML file, 64 keep-alive connections, Accept-Encoding: gzip"),
    # A routed JSON endpoint (issue 24): GET /todos/42 from a small program,
    # httpz with Route + Respond.json, the same httpz handler behind a
    # hand-written match (what the router costs), and cohttp-lwt-unix.
    # Shorter than 16k_gzip, for the time budget: 3 rounds of 1 s, no
    # h2load (1 s is 50,000+ requests here; the rounds are interleaved).
    "todos_c64": dict(file="612b", path=TODOS_PATH, body=TODOS_BODY, conns=64, headers=[],
                      workers=1, pin=True, servers=APP_SERVERS, app=True,
                      runs=3, duration=1, no_h2load=True,
                      desc="GET /todos/:id (routed JSON, 47 B body), 64 keep-alive connections"),

    "tls_612b_c64": dict(file="612b", conns=64, headers=[], workers=1, pin=True, tls=True,
                         servers=TLS_SERVERS, desc="HTTPS: 612 B file, 64 keep-alive connections"),
    "tls_16k_c64": dict(file="16k", conns=64, headers=[], workers=1, pin=True, tls=True,
                        servers=TLS_SERVERS, desc="HTTPS: 16 KiB file, 64 keep-alive connections"),
    "tls_handshake": dict(file="612b", conns=16, headers=["Connection: close"], workers=1, pin=True,
                          tls=True, servers=TLS_SERVERS,
                          desc="HTTPS: a new TLS connection (full handshake) per request, 16 connections"),
}
ORDER = ["612b_c64", "16k_c64", "1m_c64", "612b_c1000", "612b_close", "612b_c64_w2", "16k_gzip",
         "todos_c64", "tls_612b_c64", "tls_16k_c64", "tls_handshake"]

# Time budget (bench/run.sh states the totals): durations in seconds.
#
# Per case: every server started once; `warmup` s of untimed wrk each; then
# `runs` rounds of one `duration` s wrk run per server (interleaved); then,
# for pinned cases only, `h2load_runs` rounds of one h2load run per server:
# `h2load_warmup` s untimed (connection set-up), then `h2load_duration` s
# timed. The GC cases read the stats endpoint of the same instance around
# its wrk runs (no extra start); only a GC pair that is not in the main
# matrix (cohttp on 1m_c64) gets a start of its own and one wrk run of
# `gc_duration` s.
#
# Measured per pair (bench_servers.py logs and servers.json's "timing_s"):
# start ≈ 0.05 s, warm-up ≈ 1.02 s, a wrk run ≈ duration + 0.04 s, an h2load
# run ≈ h2load_warmup + h2load_duration + 0.02 s, stop ≈ 0.1 s.
#   full:  36 server×case pairs × (0.05 + 1.02 + 3 × 4.04 + 0.1)        ≈ 478 s
#          h2load on the 34 pinned pairs, 3 runs each: 26 × 3 × (0.5 +
#            1 + 0.02) + 8 Connection: close pairs × 3 × (1 + 0.02, no
#            warm-up)                                                    ≈ 143 s
#          GC: httpz and cohttp on 612b_c64, httpz on 1m_c64 during
#            their main runs (0 s); cohttp on 1m_c64 on its own:
#            0.05 + 1 + 4 + 0.1                                          ≈   5 s
#          16k_gzip (its own runs=3, duration=2, no h2load): 3 pairs ×
#            (0.05 + 1.02 + 3 × 2.04 + 0.1)                              ≈  22 s
#          todos_c64 (runs=3, duration=1, no h2load): 3 pairs × (0.05 +
#            1.02 + 3 × 1.04 + 0.1)                                      ≈  13 s
#          system calls (strace -c): 2 cases × 5 servers × (0.05 +
#            1.02 warm-up + 0.5 attach + 2.04 + ≈ 1 detach + 0.1)        ≈  47 s
#          total                                                        ≈ 708 s
#   quick: 21 pairs × (0.05 + 1.02 + 2.04 + 0.1) + todos_c64's 3 pairs
#            × (0.05 + 1.02 + 1.04 + 0.1)                                ≈  74 s
#          h2load on 16 pinned pairs, 1 run: 12 × (0.5 + 1 + 0.02)
#            + 4 × 1.02                                                  ≈  22 s
#          GC: both pairs during their main runs                         ≈   0 s
#          total                                                        ≈  96 s
MODES = {
    "quick": dict(cases=["612b_c64", "1m_c64", "612b_close", "612b_c64_w2", "16k_gzip", "todos_c64",
                         "tls_612b_c64"],
                  runs=1, duration=2, warmup=1, h2load_runs=1, h2load_warmup=0.5,
                  h2load_duration=1, gc_cases=["612b_c64"], gc_duration=2),
    "full": dict(cases=ORDER, runs=3, duration=4, warmup=1, h2load_runs=3, h2load_warmup=0.5,
                 h2load_duration=1, gc_cases=["612b_c64", "1m_c64"], gc_duration=4),
}

# Servers that report GC statistics over HTTP, and where.
STATS_PATH = {"httpz": "/__httpz/stats", "cohttp": "/__stats"}
STATS_TOKEN = "bench-stats"

WRK_LUA = r"""
-- Written by bench_servers.py: print the numbers the harness parses, exactly.
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "HTTPZ_BENCH requests=%d duration_us=%d bytes=%d connect=%d read=%d write=%d status=%d timeout=%d\n",
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout))
  io.write(string.format(
    "HTTPZ_BENCH min=%d mean=%.3f stdev=%.3f max=%d p50=%d p90=%d p99=%d p99.9=%d p99.99=%d\n",
    latency.min, latency.mean, latency.stdev, latency.max,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9), latency:percentile(99.99)))
end
"""


def log(msg):
    print(msg, flush=True)


def run_text(argv, timeout=10):
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, text=True, errors="replace")
        return p.stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        return "unavailable (%s)" % e


def machine_info():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    commit = run_text(["git", "-C", ROOT, "rev-parse", "HEAD"])
    if not re.fullmatch(r"[0-9a-f]{40}", commit):
        commit = "unknown (no commit)"
    dirty = run_text(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"])
    governor = None
    try:
        with open("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") as f:
            governor = f.read().strip()
    except OSError:
        pass
    return {
        "uname": " ".join(platform.uname()) if not shutil.which("uname") else run_text(["uname", "-a"]),
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "governor": governor,
        "commit": commit,
        "dirty": bool(dirty) and not dirty.startswith("unavailable"),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "loadavg_start": os.getloadavg()[0],
        "ocaml": run_text(["ocamlfind", "ocamlopt", "-version"]),
        "python": platform.python_version(),
    }


# HTTPS: one ECDSA P-256 certificate for every server, made per run.
_tls = None


def tls_files(workdir):
    """(cert, key) in workdir, made once."""
    global _tls
    if _tls is None:
        cert, key = os.path.join(workdir, "tls-cert.pem"), os.path.join(workdir, "tls-key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                        "-keyout", key, "-out", cert], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        for f in (cert, key):
            os.chmod(f, 0o644)  # servers that drop root privileges read them
        _tls = (cert, key)
    return _tls


# Mozilla's "intermediate" TLS 1.2 suites, the same for every server.
TLS12_CIPHERS = ("ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
                 "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
                 "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pinned(cpu, argv):
    return (["taskset", "-c", cpu] + argv) if cpu is not None else argv


# ---------------------------------------------------------------- servers ---

class Server:
    """One peer: how to tell if it is available, and how to start it."""
    name = "?"

    def available(self):
        return True, ""

    def version(self):
        return "?"

    def command(self, tmp, docroot, port, workers, stats, tls=None):
        raise NotImplementedError

    def error_log(self, tmp):
        return os.path.join(tmp, "%s-error.log" % self.name)

    def max_workers(self):
        return 64


class Httpz(Server):
    name = "httpz"

    def available(self):
        exe = httpz_exe()
        if not exe:
            return False, "not built (%s missing; run `dune build @install`)" % (
                os.path.relpath(HTTPZ_CANDIDATES[0], ROOT))
        # Cmdliner answers --help for an unknown command with the main help and
        # status 0, so look for `serve` among the listed commands instead.
        helptext = run_text([exe, "--help=plain"])
        if not re.search(r"^\s+serve\b", helptext, re.M):
            return False, "not built (%s has no `serve` command yet)" % os.path.relpath(exe, ROOT)
        return True, ""

    def version(self):
        return "httpz %s (%s)" % (machine_commit(), os.path.relpath(httpz_exe(), ROOT))

    extra = []

    def command(self, tmp, docroot, port, workers, stats, tls=None):
        argv = [httpz_exe(), "serve", "-d", docroot, "-p", str(port), "--host", "127.0.0.1",
                "--workers", str(workers)] + self.extra
        if tls:
            argv += ["--tls-cert", tls[0], "--tls-key", tls[1]]
        return argv + (["--stats-token", STATS_TOKEN] if stats else [])


class HttpzGzip(Httpz):
    """httpz serve --compress (level 6, its default)."""
    name = "httpz-gzip"
    extra = ["--compress"]


class HttpzEpoll(Httpz):
    """httpz on its readiness backend: the default (io_uring) against epoll,
    side by side. Not a peer: the report keeps it out of the verdicts."""
    name = "httpz-epoll"
    extra = ["--io", "epoll"]

    def version(self):
        return Httpz.version(self) + " --io epoll"


class Nginx(Server):
    name = "nginx"

    def available(self):
        return (True, "") if shutil.which("nginx") else (False, "nginx not installed (scripts/deps.sh bench)")

    def version(self):
        return run_text(["nginx", "-v"])

    def command(self, tmp, docroot, port, workers, stats, tls=None):
        v = run_text(["nginx", "-V"])
        temp_paths = "        client_body_temp_path %s/body;\n" % tmp
        for mod in ("proxy", "fastcgi", "uwsgi", "scgi"):
            if "--without-http_%s_module" % mod not in v:
                temp_paths += "        %s_temp_path %s/%s;\n" % (mod, tmp, mod)
        conf = os.path.join(tmp, "nginx.conf")
        with open(conf, "w") as f:
            f.write("""daemon off;
master_process on;
worker_processes %(workers)d;
worker_rlimit_nofile 16384;
pid %(tmp)s/nginx.pid;
error_log %(err)s warn;
events {
    worker_connections 8192;
}
http {
    types { text/html html; application/octet-stream bin; }
    default_type application/octet-stream;
    access_log off;
%(extra)s    # Debian's default nginx.conf: sendfile with TCP_CORK around the head.
    sendfile on;
    tcp_nopush on;
    # Never close a connection during a run: the default of 1000 requests per
    # connection would make the keep-alive cases partly measure reconnects.
    keepalive_timeout 300s;
    keepalive_requests 1000000000;
    # Cache open file descriptors and stat results, as lighttpd's default stat
    # cache does: the strongest common static-file setup, so httpz is compared
    # with a tuned nginx. Without it nginx does open+fstat+close per request and
    # measured about a third slower on the 612 B case here.
    open_file_cache max=1024 inactive=60s;
%(temp_paths)s    server {
        listen 127.0.0.1:%(port)d%(reuseport)s%(ssl)s;
        root %(docroot)s;
%(tls)s    }
}
""" % dict(workers=workers, tmp=tmp, err=self.error_log(tmp), temp_paths=temp_paths,
           port=port, docroot=docroot, reuseport=" reuseport" if workers > 1 else "",
           ssl=" ssl" if tls else "",
           # Debian's defaults otherwise: tickets on, no session cache.
           tls=("        ssl_certificate %s;\n        ssl_certificate_key %s;\n"
                "        ssl_protocols TLSv1.2 TLSv1.3;\n        ssl_ciphers %s;\n"
                % (tls[0], tls[1], TLS12_CIPHERS)) if tls else "",
           extra=self.extra_http))
        return ["nginx", "-p", tmp + "/", "-c", conf, "-e", self.error_log(tmp)]

    extra_http = ""


class NginxGzip(Nginx):
    """nginx compressing each response (it keeps no compressed copy), at
    the level httpz --compress uses."""
    name = "nginx-gzip"
    extra_http = "    gzip on;\n    gzip_comp_level 6;\n    gzip_vary on;\n"


class Lighttpd(Server):
    name = "lighttpd"

    def available(self):
        return (True, "") if shutil.which("lighttpd") else (False, "lighttpd not installed (scripts/deps.sh bench)")

    def version(self):
        return run_text(["lighttpd", "-v"]).split(" - ")[0]

    def max_workers(self):
        return 1

    def command(self, tmp, docroot, port, workers, stats, tls=None):
        conf = os.path.join(tmp, "lighttpd.conf")
        with open(conf, "w") as f:
            f.write("""server.document-root = "%(docroot)s"
server.bind = "127.0.0.1"
server.port = %(port)d
server.errorlog = "%(err)s"
server.network-backend = "sendfile"
server.max-connections = 8192
server.max-fds = 16384
# Keep-alive: never the reason a connection closes during a run. 65535 is the
# largest value lighttpd accepts (it is a 16-bit setting: 1000000 silently
# becomes 16960); bench_servers.py --check verifies 65535 requests per connection.
server.max-keep-alive-requests = 65535
server.max-keep-alive-idle = 300
server.max-read-idle = 300
server.max-write-idle = 300
mimetype.assign = ( ".html" => "text/html", ".bin" => "application/octet-stream" )
""" % dict(docroot=docroot, port=port, err=self.error_log(tmp)))
        return ["lighttpd", "-D", "-f", conf]


class H2o(Server):
    name = "h2o"

    def available(self):
        return (True, "") if shutil.which("h2o") else (False, "h2o not installed (scripts/deps.sh bench)")

    def version(self):
        return run_text(["h2o", "-v"]).splitlines()[0]

    def command(self, tmp, docroot, port, workers, stats, tls=None):
        conf = os.path.join(tmp, "h2o.conf")
        ssl = ("""  ssl:
    certificate-file: %s
    key-file: %s
    minimum-version: TLSv1.2
    cipher-suite: %s
""" % (tls[0], tls[1], TLS12_CIPHERS)) if tls else ""
        with open(conf, "w") as f:
            f.write("""listen:
  host: 127.0.0.1
  port: %(port)d
%(ssl)snum-threads: %(workers)d
max-connections: 8192
error-log: %(err)s
# Idle time allowed between requests on a keep-alive connection.
http1-request-timeout: 300
hosts:
  default:
    paths:
      /:
        file.dir: %(docroot)s
""" % dict(port=port, workers=workers, tmp=tmp, err=self.error_log(tmp), docroot=docroot, ssl=ssl))
        return ["h2o", "-c", conf]


class Cohttp(Server):
    name = "cohttp"

    def available(self):
        if not os.path.exists(COHTTP_EXE):
            return False, ("not built (%s missing: needs libcohttp-lwt-unix-ocaml-dev, then dune build)"
                           % os.path.relpath(COHTTP_EXE, ROOT))
        return True, ""

    def version(self):
        v = run_text(["ocamlfind", "query", "-format", "%v", "cohttp-lwt-unix"])
        return "cohttp-lwt-unix " + v

    def max_workers(self):
        return 1

    def command(self, tmp, docroot, port, workers, stats, tls=None):
        return [COHTTP_EXE, "-d", docroot, "-p", str(port), "--host", "127.0.0.1"]


class TodosHttpz(Server):
    """bench/server/todos_httpz.exe: GET /todos/:id with Route + Respond.json."""
    name = "httpz-todos"
    extra = []

    def available(self):
        if not os.path.exists(TODOS_HTTPZ_EXE):
            return False, "not built (%s missing; run `dune build`)" % os.path.relpath(TODOS_HTTPZ_EXE, ROOT)
        return True, ""

    def version(self):
        return "httpz %s (%s%s)" % (machine_commit(), os.path.relpath(TODOS_HTTPZ_EXE, ROOT),
                                    "".join(" " + a for a in self.extra))

    def max_workers(self):
        return 1

    def command(self, tmp, docroot, port, workers, stats, tls=None):
        return [TODOS_HTTPZ_EXE, "-p", str(port), "--host", "127.0.0.1"] + self.extra


class TodosHttpzHand(TodosHttpz):
    """The same handler behind a hand-written match instead of the router."""
    name = "httpz-todos-hand"
    extra = ["--hand-match"]


class TodosCohttp(Cohttp):
    """bench/server/cohttp_todos.exe: the same endpoint on cohttp-lwt-unix."""
    name = "cohttp-todos"

    def available(self):
        if not os.path.exists(TODOS_COHTTP_EXE):
            return False, ("not built (%s missing: needs libcohttp-lwt-unix-ocaml-dev, then dune build)"
                           % os.path.relpath(TODOS_COHTTP_EXE, ROOT))
        return True, ""

    def command(self, tmp, docroot, port, workers, stats, tls=None):
        return [TODOS_COHTTP_EXE, "-p", str(port), "--host", "127.0.0.1"]


SERVERS = {s.name: s for s in (Httpz(), HttpzEpoll(), Nginx(), Lighttpd(), H2o(), Cohttp(),
                               HttpzGzip(), NginxGzip(), TodosHttpz(), TodosHttpzHand(),
                               TodosCohttp())}
# A variant runs when its base server is wanted (--servers).
VARIANT_OF = {"httpz-gzip": "httpz", "nginx-gzip": "nginx", "httpz-epoll": "httpz",
              "httpz-todos": "httpz", "httpz-todos-hand": "httpz", "cohttp-todos": "cohttp"}


def case_path(case):
    """The request-target a case loads: its file, or its own path (todos_c64)."""
    return case.get("path") or "/" + FILES[case["file"]][0]

_commit = None


def machine_commit():
    global _commit
    if _commit is None:
        c = run_text(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"])
        _commit = c if re.fullmatch(r"[0-9a-f]{4,40}", c) else "(uncommitted)"
    return _commit


# ------------------------------------------------------ process handling ---

class Procs:
    """Every process group this script started, so that cleanup (normal exit,
    exception, Ctrl-C, SIGTERM from run.sh) can end exactly those."""

    def __init__(self, pidfile):
        self.live = {}
        self.pidfile = pidfile

    def _sync(self):
        if self.pidfile:
            with open(self.pidfile, "w") as f:
                f.write("".join("%d\n" % pid for pid in self.live))

    def spawn(self, argv, **kw):
        p = subprocess.Popen(argv, start_new_session=True, **kw)
        self.live[p.pid] = p
        self._sync()
        return p

    def stop(self, p, grace=5.0):
        if p.pid not in self.live:
            return
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                p.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()
        else:
            # The leader is gone; its children (nginx workers) may not be.
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        del self.live[p.pid]
        self._sync()

    def forget(self, p):
        self.live.pop(p.pid, None)
        self._sync()

    def stop_all(self):
        for p in list(self.live.values()):
            self.stop(p, grace=2.0)


def tree_cpu_seconds(pid):
    """utime+stime of pid and all its descendants (nginx/httpz workers)."""
    user, system = tree_cpu_split(pid)
    return user + system


def tree_cpu_split(pid):
    """(utime, stime) of pid and all its descendants, in seconds."""
    tick = os.sysconf("SC_CLK_TCK")
    parent = {}
    times = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                s = f.read()
        except OSError:
            continue
        fields = s[s.rfind(")") + 2:].split()
        parent[int(d)] = int(fields[1])
        times[int(d)] = (int(fields[11]) / tick, int(fields[12]) / tick)
    user = system = 0.0
    for p in times:
        q = p
        while q in parent and q != pid and q > 1:
            q = parent[q]
        if q == pid:
            user += times[p][0]
            system += times[p][1]
    return user, system


def tree_rss_kib(pid):
    """VmRSS of pid and all its descendants, in KiB."""
    total = 0
    for p in [pid] + tree_pids(pid):
        try:
            with open("/proc/%d/status" % p) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def loadgen_server_cpu(procs, argv, server_pid, warmup, duration, slack=15):
    """Runs a load generator with a warm-up of its own (run_loadgen) and
    measures the server tree's CPU over the timed part only: sampled when
    the warm-up ends (the generator announces nothing, so at its expected
    end; a few ms of warm-up traffic either way), scaled to `duration`
    (the sampled span is a little longer, by the generator's exit).
    Returns (output, exit status, server CPU seconds or None)."""
    marks = {}

    def mark():
        marks["cpu0"] = tree_cpu_seconds(server_pid)
        marks["t0"] = time.monotonic()
    timer = threading.Timer(warmup, mark)
    timer.start()
    out, rc, _, _ = run_loadgen(procs, argv, duration + warmup + slack)
    timer.cancel()
    cpu1 = tree_cpu_seconds(server_pid)
    span = time.monotonic() - marks["t0"] if "t0" in marks else 0
    cpu = (cpu1 - marks["cpu0"]) * min(1.0, duration / span) if span > 0 else None
    return out, rc, cpu


def tree_pids(pid):
    """pid's descendants."""
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    parent[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    out = []
    for p in parent:
        q = p
        while q in parent and q != pid and q > 1:
            q = parent[q]
        if q == pid and p != pid:
            out.append(p)
    return out


def parse_strace(path):
    """(total calls, [(syscall, calls)] most frequent first) from strace -c."""
    total, rows = 0, []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 5 and parts[-1] == "total":
                    total = int(parts[3])
                elif len(parts) >= 5 and parts[0][0].isdigit() and not parts[-1].startswith("-"):
                    try:
                        rows.append((parts[-1], int(parts[3])))
                    except ValueError:
                        pass
    except OSError:
        pass
    rows.sort(key=lambda r: -r[1])
    return total, rows


def keepalive_check(port, path, n, timeout=60.0):
    """Send n pipelined GETs on one connection; return how many 200 responses
    arrived before the server closed it (n when it kept the connection open)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    req = ("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % path).encode()

    def writer():
        try:
            for i in range(0, n, 500):
                s.sendall(req * min(500, n - i))
        except OSError:
            pass
    t = threading.Thread(target=writer, daemon=True)
    t.start()
    count, tail = 0, b""
    try:
        while count < n:
            d = s.recv(1 << 20)
            if not d:
                break
            chunk = tail + d
            count += chunk.count(b"HTTP/1.1 200 ")
            # 12 bytes: a status line cut by the read boundary is counted once.
            tail = chunk[-12:]
    except OSError:
        pass
    finally:
        s.close()
    return count


def http_get(port, path, headers=None, timeout=5.0, tls=False):
    if tls:
        import ssl
        c = http.client.HTTPSConnection("127.0.0.1", port, timeout=timeout,
                                        context=ssl._create_unverified_context())
    else:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path, headers=headers or {})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


class Running:
    def __init__(self, proc, port, tmp, server, tls=None):
        self.proc, self.port, self.tmp, self.server, self.tls = proc, port, tmp, server, tls


def start_server(procs, server, docroot, workers, pin, stats, expect_path, expect_body, tls=None):
    tmp = tempfile.mkdtemp(prefix="httpz-bench-%s-" % server.name)
    # Servers that drop root privileges (nginx, h2o run as root) must read these.
    os.chmod(tmp, 0o755)
    port = free_port()
    argv = server.command(tmp, docroot, port, workers, stats, tls)
    out = open(os.path.join(tmp, "stdout.log"), "w")
    proc = procs.spawn(pinned(SERVER_CPU if pin else None, argv), stdout=out,
                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=tmp)
    out.close()
    run = Running(proc, port, tmp, server, tls)
    deadline = time.monotonic() + 15
    last = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            last = "exited with status %s" % proc.returncode
            break
        try:
            status, body = http_get(port, expect_path, timeout=1.0, tls=bool(tls))
            if status != 200:
                last = "GET %s answered %d" % (expect_path, status)
                break
            if body != expect_body:
                last = "GET %s returned %d bytes, not the %d-byte test file" % (
                    expect_path, len(body), len(expect_body))
                break
            return run, None
        except OSError as e:
            last = str(e)
            time.sleep(0.05)
    err = server_logs(run)
    stop_server(procs, run)
    return None, "did not start: %s%s" % (last, ("\n" + err) if err else "")


def server_logs(run):
    text = ""
    for name in ("stdout.log", "%s-error.log" % run.server.name):
        path = os.path.join(run.tmp, name)
        try:
            with open(path, errors="replace") as f:
                t = f.read().strip()
            if t:
                text += "  [%s] %s\n" % (name, "\n  ".join(t.splitlines()[-10:]))
        except OSError:
            pass
    return text.rstrip()


def stop_server(procs, run):
    procs.stop(run.proc)
    shutil.rmtree(run.tmp, ignore_errors=True)


# ------------------------------------------------------- load generators ---

def run_loadgen(procs, argv, limit):
    """Runs one load generator pinned to CLIENT_CPU. Returns its output, exit
    status, CPU seconds (wait4 rusage: exactly this process) and wall time.
    It is killed after `limit` s, so a hung generator costs seconds, not the
    whole run (h2load 1.52 never exits in -D mode with Connection: close)."""
    name = argv[0]
    argv = pinned(CLIENT_CPU, argv)
    t0 = time.monotonic()
    p = procs.spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                    errors="replace")
    killed = []

    def kill():
        killed.append(True)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    timer = threading.Timer(limit, kill)
    timer.start()
    try:
        out = p.stdout.read()
        p.stdout.close()
        _, status, ru = os.wait4(p.pid, 0)
    except BaseException:
        procs.stop(p, grace=1.0)
        raise
    finally:
        timer.cancel()
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    procs.forget(p)
    if killed:
        out += "\n[bench_servers.py: %s killed after %.0f s]\n" % (name, limit)
    return out, p.returncode, ru.ru_utime + ru.ru_stime, wall


def url(port, path, tls):
    return "%s://127.0.0.1:%d%s" % ("https" if tls else "http", port, path)


def run_wrk(procs, port, path, conns, duration, headers, lua, timeout_s=5, tls=False):
    argv = ["wrk", "-t1", "-c%d" % conns, "-d%ds" % duration, "--timeout", "%ds" % timeout_s,
            "--latency", "-s", lua]
    for h in headers:
        argv += ["-H", h]
    argv.append(url(port, path, tls))
    return run_loadgen(procs, argv, duration + timeout_s + 15)


def parse_wrk(out):
    vals = {}
    for line in out.splitlines():
        if line.startswith("HTTPZ_BENCH "):
            for tok in line.split()[1:]:
                k, v = tok.split("=", 1)
                vals[k] = float(v)
    if "requests" not in vals or "p50" not in vals:
        return None
    m = re.search(r"Requests/sec:\s+([0-9.]+)", out)
    secs = vals["duration_us"] / 1e6
    errors = {k: int(vals[k]) for k in ("connect", "read", "write", "status", "timeout")}
    return {
        "requests": int(vals["requests"]),
        "duration_s": round(secs, 4),
        "rps": round(vals["requests"] / secs, 1) if secs > 0 else 0.0,
        "rps_wrk_text": float(m.group(1)) if m else None,
        "bytes_per_response": round(vals["bytes"] / vals["requests"], 1) if vals["requests"] else None,
        "latency_us": {"min": vals["min"], "mean": vals["mean"], "stdev": vals["stdev"],
                       "p50": vals["p50"], "p90": vals["p90"], "p99": vals["p99"],
                       "p99.9": vals["p99.9"], "p99.99": vals["p99.99"], "max": vals["max"]},
        "errors": errors,
    }


def closes_connections(case):
    return any(h.lower().replace(" ", "") == "connection:close" for h in case["headers"])


def ms(seconds):
    # h2load's <DURATION> is an integer with an optional unit (h, m, s, ms):
    # "0.5" is refused, "500ms" is not.
    return "%dms" % round(seconds * 1000)


def run_h2load(procs, port, path, conns, duration, warmup, headers, requests=None, tls=False):
    """h2load over HTTP/1.1, one thread. Timed mode (requests=None): the
    connections are set up during the untimed warm-up, so the timed part is
    steady-state load only. Count mode (-n requests, no warm-up): for
    Connection: close, where h2load 1.52's timed mode never exits, and where
    connection set-up is the workload anyway."""
    argv = ["h2load", "--h1", "-t1", "-c%d" % conns]
    if requests:
        argv += ["-n", str(requests)]
    else:
        argv += ["-D", ms(duration), "--warm-up-time", ms(warmup)]
    for h in headers:
        argv += ["-H", h]
    argv.append(url(port, path, tls))
    # Count mode's length depends on the server's rate: allow it 4x.
    return run_loadgen(procs, argv, (4 * duration if requests else duration + warmup) + 15)


def parse_h2load(out, duration):
    m = re.search(r"finished in ([0-9.]+)(m?s), ([0-9.]+) req/s", out)
    r = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                  r"(\d+) failed, (\d+) errored, (\d+) timeout", out)
    s = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out)
    t = re.search(r"time for request:\s+([0-9.]+)(us|ms|s)\s+([0-9.]+)(us|ms|s)\s+([0-9.]+)(us|ms|s)"
                  r"\s+([0-9.]+)(us|ms|s)", out)
    if not (m and r):
        return None

    def us(v, unit):
        return float(v) * {"us": 1, "ms": 1e3, "s": 1e6}[unit]
    return {
        "requests": int(r.group(4)),  # succeeded
        "rps": float(m.group(3)),
        # Timed mode: the measured part only (h2load's req/s is over it);
        # count mode: the whole run.
        "duration_s": duration if duration else float(m.group(1)) / (1e3 if m.group(2) == "ms" else 1),
        "latency_us": ({"min": us(t.group(1), t.group(2)), "max": us(t.group(3), t.group(4)),
                        "mean": us(t.group(5), t.group(6)), "sd": us(t.group(7), t.group(8))}
                       if t else {}),
        "errors": {"failed": int(r.group(5)), "errored": int(r.group(6)),
                   "timeout": int(r.group(7)),
                   "non_2xx": (int(s.group(2)) + int(s.group(3)) + int(s.group(4))) if s else None},
    }


# ------------------------------------------------------------- summaries ---

def summarise(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def summarise_runs(runs):
    ok = [r for r in runs if r.get("rps") is not None]
    if not ok:
        return None
    s = {"rps": summarise([r["rps"] for r in ok])}
    keys = ok[0].get("latency_us", {}).keys()
    s["latency_us"] = {k: summarise([r["latency_us"].get(k) for r in ok]) for k in keys}
    s["loadgen_cpu"] = summarise([r.get("loadgen_cpu") for r in ok])
    s["server_cpu"] = summarise([r.get("server_cpu") for r in ok])
    return s


def error_count(run):
    return sum(v for v in run.get("errors", {}).values() if v)


# ------------------------------------------------------------------ main ---

class Bench:
    def __init__(self, args):
        self.args = args
        self.mode = MODES[args.mode]
        self.procs = Procs(args.pidfile)
        self.workdir = tempfile.mkdtemp(prefix="httpz-bench-")
        os.chmod(self.workdir, 0o755)
        self.docroot = os.path.join(self.workdir, "docroot")
        os.mkdir(self.docroot)
        os.chmod(self.docroot, 0o755)
        self.bodies = {}
        for key, (name, size) in FILES.items():
            # Deterministic printable content: identical bytes in every run.
            line = b"httpz benchmark document 0123456789abcdefghijklmnopqrstuvwxyz\n"
            body = (line * (size // len(line) + 1))[:size]
            path = os.path.join(self.docroot, name)
            with open(path, "wb") as f:
                f.write(body)
            os.chmod(path, 0o644)
            self.bodies[key] = body
        self.lua = os.path.join(self.workdir, "report.lua")
        with open(self.lua, "w") as f:
            f.write(WRK_LUA)
        os.chmod(self.lua, 0o644)
        self.rawdir = os.path.join(os.path.dirname(os.path.abspath(args.out)), "raw")
        self.problems = []
        self.have_h2load = shutil.which("h2load") is not None
        # (server, case) -> GC result measured during that pair's main runs.
        self.gc_done = {}
        # Wall time per phase (start, warmup, wrk, h2load, stop, gc_extra),
        # summed over the run: what the time budget in MODES is checked against.
        self.phase_s = {}

    def cleanup(self):
        self.procs.stop_all()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def raw(self, name, text):
        os.makedirs(self.rawdir, exist_ok=True)
        with open(os.path.join(self.rawdir, name + ".txt"), "w") as f:
            f.write(text)

    def problem(self, msg):
        self.problems.append(msg)
        log("  PROBLEM: " + msg)

    def servers_for(self, case):
        wanted = self.args.servers.split(",") if self.args.servers else ALL_SERVERS
        return [s for s in case["servers"] if VARIANT_OF.get(s, s) in wanted]

    def start(self, name, case, stats=False):
        server = SERVERS[name]
        tls = tls_files(self.workdir) if case.get("tls") else None
        return start_server(self.procs, server, self.docroot, case["workers"], case["pin"], stats,
                            case_path(case), case.get("body") or self.bodies[case["file"]], tls)

    def warmup(self, run, case):
        # Untimed: the first seconds of a server include page-cache misses,
        # first touch of its buffers and the connection ramp-up.
        fname = case_path(case)
        run_wrk(self.procs, run.port, fname, case["conns"], self.mode["warmup"],
                case["headers"], self.lua, tls=bool(run.tls))

    def one_wrk(self, run, case, duration, tag):
        fname = case_path(case)
        u0, s0 = tree_cpu_split(run.proc.pid)
        out, rc, cpu, wall = run_wrk(self.procs, run.port, fname, case["conns"], duration,
                                     case["headers"], self.lua, tls=bool(run.tls))
        u1, s1 = tree_cpu_split(run.proc.pid)
        scpu = (u1 - u0) + (s1 - s0)
        self.raw(tag, out)
        res = parse_wrk(out)
        if rc != 0 or res is None:
            self.problem("%s: wrk failed (exit %s): %s" % (tag, rc, out.strip()[-300:]))
            return None
        res["loadgen_cpu"] = round(cpu / res["duration_s"], 3) if res["duration_s"] else None
        res["server_cpu"] = round(scpu / res["duration_s"], 3) if res["duration_s"] else None
        # Server CPU per request, and the kernel's part of it.
        res["server_us_per_request"] = round(scpu * 1e6 / res["requests"], 2) if res["requests"] else None
        res["server_kernel_share"] = round((s1 - s0) / scpu, 3) if scpu > 0 else None
        res["wall_s"] = round(wall, 2)
        n = error_count(res)
        if n:
            self.problem("%s: %d failed requests %s" % (tag, n, res["errors"]))
        return res

    def run_cases(self, cases):
        results = []
        for cid in cases:
            case = CASES[cid]
            h2 = self.h2load_for(case)
            entry = {"id": cid, "description": case["desc"],
                     "file": case_path(case).lstrip("/"),
                     "file_bytes": len(case["body"]) if case.get("body") else FILES[case["file"]][1],
                     "connections": case["conns"],
                     "headers": case["headers"], "workers": case["workers"],
                     "server_pinned": case["pin"], "loadgen": "wrk", "threads": 1,
                     "duration_s": self.case_mode(case, "duration"),
                     "runs_wanted": self.case_mode(case, "runs"),
                     "compression": bool(case.get("compression")),
                     "app": bool(case.get("app")),
                     "interleaved": True,
                     "h2load": ({"threads": 1, "runs_wanted": self.mode["h2load_runs"],
                                 "duration_s": self.mode["h2load_duration"],
                                 "warmup_s": 0 if closes_connections(case) else self.mode["h2load_warmup"],
                                 "mode": "requests" if closes_connections(case) else "duration"}
                                if h2 else None),
                     "results": []}
            log("== %s: %s (wrk %d x %ds, servers interleaved%s)" % (
                cid, case["desc"], self.case_mode(case, "runs"), self.case_mode(case, "duration"),
                ", then h2load %gs on the same instances" % self.mode["h2load_duration"] if h2 else ""))
            entry["results"] = self.bench_case(case, cid)
            # A load generator at >= SATURATED of its core is the bottleneck, not
            # the server: the report says so next to that case's numbers.
            for key, gen in (("loadgen_saturated", None), ("h2load_saturated", "h2load")):
                entry[key] = [r["server"] for r in entry["results"]
                              if max([x.get("loadgen_cpu") or 0
                                      for x in ((r.get(gen) or {}) if gen else r).get("runs", [])]
                                     or [0]) >= SATURATED]
            if entry["loadgen_saturated"]:
                log("  wrk used >= %d%% of its core against %s" % (
                    100 * SATURATED, ", ".join(entry["loadgen_saturated"])))
            if entry["h2load_saturated"]:
                log("  h2load used >= %d%% of its core against %s" % (
                    100 * SATURATED, ", ".join(entry["h2load_saturated"])))
            results.append(entry)
        return results

    def case_mode(self, case, key):
        """The mode's runs or duration, or the case's own when smaller."""
        return min(self.mode[key], case.get(key, self.mode[key]))

    def h2load_for(self, case):
        """h2load runs on every pinned case: unpinned servers share the load
        generator's core, where a second generator's number means no more
        than wrk's."""
        return case["pin"] and self.have_h2load and not case.get("no_h2load")

    def gc_wanted(self, name, cid):
        return name in STATS_PATH and cid in self.mode["gc_cases"]

    def bench_case(self, case, cid):
        """Every server of one case, interleaved: all are started (pinned
        servers all on SERVER_CPU; the ones not under load sit idle in
        epoll_wait) and warmed up, then each round runs wrk once against
        each server, the order rotating by one server per round. A slow
        spell of the shared machine then lands on every server alike
        instead of on whichever ran during it, and the runs of one round
        can be compared pairwise (the report's paired ratios). After the
        rounds, h2load runs once against each, on the same instances."""
        names = self.servers_for(case)
        out = {}
        live = []          # names started, in case order
        state = {}         # name -> dict(run, timing, gc, before, runs)
        for name in names:
            server = SERVERS[name]
            ok, why = server.available()
            if not ok:
                log("  %-9s skipped: %s" % (name, why.split(" (")[0]))
                out[name] = {"server": name, "skipped": why}
                continue
            if case["workers"] > server.max_workers():
                why = "no multi-worker mode"
                log("  %-9s %s: skipped" % (name, why))
                out[name] = {"server": name, "skipped": why}
                continue
            gc = self.gc_wanted(name, cid)
            t = time.monotonic()
            # --stats-token only adds a check of the request target against the stats
            # path to httpz's request handling (server/loop.ml, dispatch); the
            # cohttp peer always answers /__stats. The served workload is the same.
            run, err = self.start(name, case, stats=gc)
            timing = {"start": time.monotonic() - t}
            if err:
                self.problem("%s %s %s" % (cid, name, err))
                out[name] = {"server": name, "skipped": err}
                continue
            live.append(name)
            state[name] = dict(run=run, timing=timing, gc=gc, before=None, runs=[], h2=None)
        try:
            for name in live:
                st = state[name]
                t = time.monotonic()
                self.warmup(st["run"], case)
                st["timing"]["warmup"] = time.monotonic() - t
                if st["gc"]:
                    st["before"] = self.read_stats(st["run"], name)
            self.rounds(live, state, self.case_mode(case, "runs"), "wrk", "runs",
                        lambda st, name, i: self.one_wrk(st["run"], case, self.case_mode(case, "duration"),
                                                         "%s.%s.run%d" % (cid, name, i)))
            for name in live:
                st = state[name]
                if st["gc"]:
                    after = self.read_stats(st["run"], name)
                    n = len(st["runs"])
                    self.gc_done[(name, cid)] = self.gc_result(
                        name, cid, st["before"], after, st["runs"],
                        "its %d main wrk run%s" % (n, "s" if n != 1 else ""))
            # h2load in rounds too, rotating the same way.
            if self.h2load_for(case):
                self.rounds(live, state, self.mode["h2load_runs"], "h2load", "h2runs",
                            lambda st, name, i: self.one_h2load(
                                st["run"], case, "%s.%s.h2load%d" % (cid, name, i), st["runs"]))
                for name in live:
                    state[name]["h2"] = self.h2load_result(state[name]["h2runs"])
            for name in live:
                run = state[name]["run"]
                if run.proc.poll() is not None:
                    self.problem("%s %s: server exited during the run (status %s)\n%s" % (
                        cid, name, run.proc.returncode, server_logs(run)))
        finally:
            for name in live:
                st = state[name]
                t = time.monotonic()
                stop_server(self.procs, st["run"])
                st["timing"]["stop"] = time.monotonic() - t
        for name in live:
            out[name] = self.server_result(name, state[name])
        return [out[n] for n in names if n in out]

    @staticmethod
    def rounds(live, state, n, phase, key, run_one):
        """n rounds of run_one(state, name, round) against every live server,
        the order rotating by one server per round; each result, tagged with
        its 1-based round, goes to state[name][key], its wall time to the
        phase's timing."""
        for name in live:
            state[name].setdefault(key, [])
        for i in range(n):
            k = i % len(live) if live else 0
            for name in live[k:] + live[:k]:
                st = state[name]
                if st["run"].proc.poll() is not None:
                    continue
                t = time.monotonic()
                res = run_one(st, name, i + 1)
                st["timing"][phase] = st["timing"].get(phase, 0.0) + time.monotonic() - t
                if res:
                    res["round"] = i + 1
                    st[key].append(res)

    def server_result(self, name, st):
        server = SERVERS[name]
        runs, h2 = st["runs"], st["h2"]
        timing = {k: round(v, 2) for k, v in st["timing"].items()}
        for k, v in timing.items():
            self.phase_s[k] = self.phase_s.get(k, 0.0) + v
        summary = summarise_runs(runs)
        errors = sum(error_count(r) for r in runs)
        if summary:
            lat = summary["latency_us"]
            log("  %-9s %10.0f req/s [%.0f-%.0f]  p50 %6.0fus p99 %7.0fus p99.9 %7.0fus  wrk cpu %3.0f%%  server cpu %3.0f%%%s" % (
                name, summary["rps"]["median"], summary["rps"]["min"], summary["rps"]["max"],
                lat["p50"]["median"], lat["p99"]["median"], lat["p99.9"]["median"],
                100 * (summary["loadgen_cpu"] or {"median": 0})["median"],
                100 * (summary["server_cpu"] or {"median": 0})["median"],
                ("  ERRORS: %d" % errors) if errors else ""))
        if h2 and h2["summary"]:
            hs = h2["summary"]
            log("  %-9s %10.0f req/s (h2load)  h2load cpu %3.0f%%  server cpu %3.0f%%%s" % (
                "", hs["rps"]["median"], 100 * (hs["loadgen_cpu"] or {"median": 0})["median"],
                100 * (hs["server_cpu"] or {"median": 0})["median"],
                ("  ERRORS: %d" % h2["errors"]) if h2["errors"] else ""))
        out = {"server": name, "version": server.version(), "runs": runs, "summary": summary,
               "errors": errors, "ok": bool(runs) and errors == 0, "timing_s": timing}
        if h2 is not None:
            out["h2load"] = h2
        return out

    def one_h2load(self, run, case, tag, wrk_runs):
        """One h2load run on an already warm server: the run's result, or
        None when h2load failed (reported as a problem)."""
        d, w = self.mode["h2load_duration"], self.mode["h2load_warmup"]
        count = None
        if closes_connections(case):
            # h2load 1.52 in -D mode never exits when the server closes every
            # connection (it spins after "Stopped all clients"). Ask for as many
            # requests as wrk served in d s on this same instance instead.
            rate = statistics.median(r["rps"] for r in wrk_runs) if wrk_runs else 5000
            count = max(case["conns"], int(rate * d))
        cpu0 = tree_cpu_seconds(run.proc.pid)
        out, rc, cpu, wall = run_h2load(self.procs, run.port, case_path(case),
                                        case["conns"], d, w, case["headers"], count,
                                        tls=bool(run.tls))
        scpu = tree_cpu_seconds(run.proc.pid) - cpu0
        self.raw(tag, out)
        res = parse_h2load(out, None if count else d)
        if rc != 0 or res is None:
            self.problem("%s: h2load failed (exit %s): %s" % (tag, rc, out.strip()[-300:]))
            return None
        # Both CPU shares cover h2load's whole life (connection set-up,
        # warm-up and the timed part): h2load reports no CPU split.
        res["loadgen_cpu"] = round(cpu / wall, 3) if wall else None
        res["server_cpu"] = round(scpu / wall, 3) if wall else None
        res["mode"] = "requests" if count else "duration"
        res["warmup_s"] = 0 if count else w
        res["wall_s"] = round(wall, 2)
        n = error_count(res)
        if n:
            self.problem("%s: %d failed requests %s" % (tag, n, res["errors"]))
        return res

    @staticmethod
    def h2load_result(runs):
        """The shape of a wrk result without its server fields."""
        errors = sum(error_count(r) for r in runs)
        return {"runs": runs, "summary": summarise_runs(runs), "errors": errors,
                "ok": bool(runs) and errors == 0}

    def read_stats(self, run, name):
        try:
            st, body = http_get(run.port, STATS_PATH[name], tls=bool(run.tls),
                                headers={"Authorization": "Bearer " + STATS_TOKEN})
            return json.loads(body) if st == 200 else None
        except (OSError, ValueError):
            return None

    def gc_result(self, name, cid, before, after, runs, window):
        """GC counters over `runs` (wrk results on one server instance),
        from the stats read before and after them."""
        base = {"server": name, "case": cid, "window": window}
        if before is None or after is None:
            why = "no GC statistics at %s" % STATS_PATH[name]
            log("  %-9s %s: GC not measured" % (name, why))
            return dict(base, skipped=why)
        if not runs:
            return dict(base, skipped="wrk failed")
        delta = {}
        for k in ("requests", "minor_words", "promoted_words", "major_words",
                  "minor_collections", "major_collections", "compactions"):
            if isinstance(before.get(k), (int, float)) and isinstance(after.get(k), (int, float)):
                delta[k] = after[k] - before[k]
        # Divide by what the server served: wrk's count misses the requests
        # still in flight when it stops (up to one per connection per run),
        # which the server did serve. The server's counter may include the
        # second stats request itself, hence - 1. Fall back to wrk's count
        # without a counter.
        n_wrk = sum(r["requests"] for r in runs)
        n, counted = n_wrk, "wrk"
        if delta.get("requests", 0) - 1 >= n:
            n, counted = delta["requests"] - 1, "server"
        per = {k: round(v * 100000 / n, 3) for k, v in delta.items() if k != "requests"} if n else {}
        out = dict(base, requests=n, requests_counted_by=counted, requests_wrk=n_wrk,
                   runs=len(runs), rps=statistics.median(r["rps"] for r in runs),
                   errors=sum(error_count(r) for r in runs), delta=delta,
                   per_100k_requests=per,
                   words_per_request=round(delta["minor_words"] / n, 3)
                   if n and "minor_words" in delta else None,
                   heap_words_after=after.get("heap_words"),
                   top_heap_words_after=after.get("top_heap_words"))
        log("  %-9s GC over %s: %d requests, %.1f minor words/request, %s minor GCs and %s major GCs per 100k requests" % (
            name, window, n, out["words_per_request"] if out["words_per_request"] is not None else float("nan"),
            per.get("minor_collections"), per.get("major_collections")))
        return out

    def gc_case(self, name, cid):
        """A GC measurement of its own, for a server the case's main matrix
        does not run (cohttp on 1m_c64): start with stats, warm up, one wrk
        run of gc_duration s between two stats reads."""
        case = CASES[cid]
        server = SERVERS[name]
        ok, why = server.available()
        base = {"server": name, "case": cid}
        if not ok:
            log("  %-9s skipped: %s" % (name, why.split(" (")[0]))
            return dict(base, skipped=why)
        t = time.monotonic()
        run, err = self.start(name, case, stats=True)
        if err:
            self.problem("gc %s %s %s" % (cid, name, err))
            return dict(base, skipped=err)
        try:
            self.warmup(run, case)
            before = self.read_stats(run, name)
            res = (self.one_wrk(run, case, self.mode["gc_duration"], "gc.%s.%s" % (cid, name))
                   if before is not None else None)
            after = self.read_stats(run, name)
        finally:
            stop_server(self.procs, run)
            self.phase_s["gc_extra"] = self.phase_s.get("gc_extra", 0.0) + time.monotonic() - t
        return self.gc_result(name, cid, before, after, [res] if res else [],
                              "one %d s wrk run on a start of its own" % self.mode["gc_duration"])

    # ------------------------------------------------ system calls ---

    SYSCALL_CASES = ["612b_c64", "16k_c64"]
    SYSCALL_SERVERS = ["httpz", "httpz-epoll", "nginx", "lighttpd", "h2o"]

    def syscalls(self):
        """System calls per request, counted by `strace -c` attached to the
        server (every process and thread) during one wrk run. strace slows
        the server down many times over, so these runs give counts, never
        speeds; the count per request does not depend on the speed."""
        out = []
        wanted = self.args.servers.split(",") if self.args.servers else ALL_SERVERS
        for cid in self.SYSCALL_CASES:
            case = CASES[cid]
            for name in self.SYSCALL_SERVERS:
                if name not in wanted or not SERVERS[name].available()[0]:
                    continue
                t = time.monotonic()
                run, err = self.start(name, case)
                if err:
                    self.problem("syscalls %s %s %s" % (cid, name, err))
                    continue
                try:
                    out.append(self.count_syscalls(run, name, cid, case))
                finally:
                    stop_server(self.procs, run)
                    self.phase_s["syscalls"] = self.phase_s.get("syscalls", 0.0) + time.monotonic() - t
        return out

    def count_syscalls(self, run, name, cid, case):
        self.warmup(run, case)
        pids = [run.proc.pid] + [p for p in tree_pids(run.proc.pid) if p != run.proc.pid]
        summary = os.path.join(run.tmp, "strace.txt")
        argv = ["strace", "-f", "-c", "-q", "-o", summary]
        for p in pids:
            argv += ["-p", str(p)]
        tracer = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # attached
        fname = case_path(case)
        text, rc, _cpu, _wall = run_wrk(self.procs, run.port, fname, case["conns"], 2,
                                        case["headers"], self.lua, tls=bool(run.tls))
        tracer.send_signal(signal.SIGINT)
        try:
            tracer.wait(timeout=15)
        except subprocess.TimeoutExpired:
            tracer.kill()
        res = parse_wrk(text)
        calls, top = parse_strace(summary)
        n = res["requests"] if res else 0
        entry = {"case": cid, "server": name, "requests": n, "syscalls": calls,
                 "per_request": round(calls / n, 2) if n and calls else None, "top": top[:6]}
        log("  %-11s %-9s %6.2f system calls per request (%s)" % (
            name, cid, entry["per_request"] or float("nan"),
            ", ".join("%s %.2f" % (k, v / n) for k, v in top[:4]) if n else "-"))
        return entry

    def main(self):
        a = self.args
        wanted_cases = a.cases.split(",") if a.cases else self.mode["cases"]
        for c in wanted_cases:
            if c not in CASES:
                sys.exit("unknown case %s (known: %s)" % (c, ", ".join(ORDER)))
        raise_nofile()
        info = machine_info()
        if info["loadavg_start"] > 0.5:
            log("warning: load average %.2f before the run; numbers will be noisy" % info["loadavg_start"])
        if (os.cpu_count() or 1) < 2:
            log("warning: fewer than 2 CPUs: server and load generator share a core")
        doc = {
            "schema": SCHEMA, "mode": a.mode, "machine": info,
            "config": {"server_cpu": SERVER_CPU, "client_cpu": CLIENT_CPU,
                       "runs": self.mode["runs"], "duration_s": self.mode["duration"],
                       "warmup_s": self.mode["warmup"],
                       "h2load_duration_s": self.mode["h2load_duration"],
                       "h2load_runs": self.mode["h2load_runs"],
                       "h2load_warmup_s": self.mode["h2load_warmup"],
                       "saturation_threshold": SATURATED,
                       "nofile": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
                       "wrk": run_text(["wrk", "-v"]).splitlines()[0].split(" [")[0] if shutil.which("wrk") else None,
                       "h2load": run_text(["h2load", "--version"]) if shutil.which("h2load") else None},
            "servers": {}, "cases": [], "gc": [], "problems": self.problems,
        }
        for name in ALL_SERVERS + [n for c in wanted_cases for n in CASES[c]["servers"]
                                   if n in APP_SERVERS]:
            if name in doc["servers"]:
                continue
            ok, why = SERVERS[name].available()
            doc["servers"][name] = ({"available": True, "version": SERVERS[name].version()}
                                    if ok else {"available": False, "reason": why})
            if not ok:
                log("%s: %s" % (name, why))
        if not shutil.which("wrk"):
            sys.exit("wrk is not installed (scripts/deps.sh bench)")
        if not self.have_h2load:
            log("h2load not installed (scripts/deps.sh bench): wrk only, no second load generator")
        t0 = time.monotonic()
        doc["cases"] = self.run_cases(wanted_cases)
        log("== GC under load (servers with a stats endpoint)")
        wanted_servers = a.servers.split(",") if a.servers else ALL_SERVERS
        for cid in self.mode["gc_cases"]:
            if cid not in wanted_cases:
                continue
            for name in STATS_PATH:
                if name not in wanted_servers:
                    continue
                if (name, cid) in self.gc_done:
                    g = self.gc_done[(name, cid)]
                    if not g.get("skipped"):
                        log("  %-9s %s: measured during its main runs (above)" % (name, cid))
                    doc["gc"].append(g)
                else:
                    doc["gc"].append(self.gc_case(name, cid))
        if not a.cases and shutil.which("strace"):
            log("== System calls per request (strace -c during one wrk run; counts, not speed)")
            doc["syscalls"] = self.syscalls()
        doc["timing_s"] = {k: round(v, 1) for k, v in self.phase_s.items()}
        log("time per phase, summed: " + ", ".join(
            "%s %.0f s" % (k, v) for k, v in doc["timing_s"].items()))
        info["loadavg_end"] = os.getloadavg()[0]
        doc["elapsed_s"] = round(time.monotonic() - t0, 1)
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out + ".tmp", "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(a.out + ".tmp", a.out)
        log("server benchmarks: %.0f s, results in %s" % (doc["elapsed_s"], os.path.relpath(a.out)))
        if self.problems:
            log("%d problem(s) (also listed in the JSON and the report):" % len(self.problems))
            for p in self.problems:
                log("  - " + p.splitlines()[0])
        return 1 if self.problems else 0

    def check(self):
        """Start every server for every file, verify the response, stop. No timing."""
        raise_nofile()
        bad = 0
        wanted = self.args.servers.split(",") if self.args.servers else ALL_SERVERS + APP_SERVERS
        for name in wanted:
            server = SERVERS[name]
            ok, why = server.available()
            if not ok:
                log("%-9s %s" % (name, why))
                continue
            if name in APP_SERVERS:
                bad += self.check_app(name)
                continue
            for key in FILES:
                case = dict(CASES["612b_c64"], file=key)
                run, err = self.start(name, case)
                if err:
                    log("%-9s %-10s FAIL %s" % (name, FILES[key][0], err))
                    bad += 1
                    continue
                try:
                    st, body = http_get(run.port, "/" + FILES[key][0], {"Connection": "close"})
                    good = st == 200 and body == self.bodies[key]
                    st2, _ = http_get(run.port, "/does-not-exist")
                    good = good and st2 == 404
                    log("%-9s %-10s %s (404 for a missing file: %s)" % (
                        name, FILES[key][0], "ok" if good else "FAIL status %d" % st, st2 == 404))
                    bad += 0 if good else 1
                    logs = server_logs(run)
                    if logs and key == "612b":
                        log(logs)
                    if key == "612b":
                        # lighttpd's ceiling is 65535 requests per connection: at 64
                        # connections that is 4.2 M requests per run, far above what
                        # any server here reaches in 10 s.
                        want = 65000
                        n = keepalive_check(run.port, "/" + FILES[key][0], want)
                        log("%-9s keep-alive: %d of %d pipelined requests answered on one connection%s" % (
                            name, n, want, "" if n >= want else "  (FAIL: connection closed)"))
                        bad += 0 if n >= want else 1
                finally:
                    stop_server(self.procs, run)
        return 1 if bad else 0

    def check_app(self, name):
        """An application server (todos_c64): the todo byte for byte, 404 for
        an unknown id. Returns the number of failures."""
        case = CASES["todos_c64"]
        run, err = self.start(name, case)
        if err:
            log("%-16s %s FAIL %s" % (name, case["path"], err))
            return 1
        try:
            st, body = http_get(run.port, case["path"], {"Connection": "close"})
            st2, _ = http_get(run.port, "/todos/999999")
            good = st == 200 and body == case["body"] and st2 == 404
            log("%-16s %s %s (404 for an unknown id: %s)" % (
                name, case["path"], "ok" if good else "FAIL status %d" % st, st2 == 404))
            return 0 if good else 1
        finally:
            stop_server(self.procs, run)


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else 65536
    want = min(want, 65536)
    if soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
        except (ValueError, OSError):
            pass
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft < 4096:
        log("warning: open-file limit %d < 4096: the 1000-connection case may fail" % soft)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=sorted(MODES), default="quick")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "servers.json"))
    ap.add_argument("--servers", help="comma-separated subset of %s" % ",".join(ALL_SERVERS))
    ap.add_argument("--cases", help="comma-separated subset of %s" % ",".join(ORDER))
    ap.add_argument("--pidfile", help="keep the process groups started in this file (for run.sh's trap)")
    ap.add_argument("--check", action="store_true", help="only start, verify and stop every server")
    a = ap.parse_args()

    def on_signal(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    b = Bench(a)
    try:
        rc = b.check() if a.check else b.main()
    except KeyboardInterrupt:
        log("\ninterrupted: stopping servers")
        rc = 130
    finally:
        b.cleanup()
    sys.exit(rc)


if __name__ == "__main__":
    main()
