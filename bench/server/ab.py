#!/usr/bin/env python3
"""Interleaved A/B comparison of server builds or options on one case.

    bench/server/ab.py CASE ROUNDS SECONDS SPEC [SPEC ...]

Each SPEC is a server to compare: a peer's name (nginx, lighttpd, h2o,
cohttp, httpz = the current build; for the routed-JSON case todos_c64:
httpz-todos, httpz-todos-hand, cohttp-todos), or LABEL=EXE[:ARG,ARG...] for an httpz
binary with extra `httpz serve` arguments, optionally followed by
|VAR=VALUE;VAR=VALUE for environment variables. Example, the current build
against itself without TCP_NOTSENT_LOWAT and against lighttpd:

    bench/server/ab.py 1m_c64 6 3 httpz \\
        'nolowat=_build/default/bin/main.exe:--send-lowat=0' lighttpd

Every round starts each server in turn (pinned to CPU 0, as make bench
does), warms it up for 1 s, measures one SECONDS-long run of the load
generator (wrk, or h2load with LOADGEN=h2load) pinned to CPU 1, and stops
it. Per SPEC it prints each run, then the median req/s, the median and range
of the per-round ratios to the first SPEC (runs of one round met the same
state of this shared machine, so the ratio cancels most of its drift), the
server's CPU time per request and its ratio, and the p99 latency. Rough on
purpose: it is the tool for deciding whether a change helps, and make bench
is the one whose numbers are reported.
"""

import os
import random
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_servers as B  # noqa: E402


class Build(B.Httpz):
    """An httpz binary with extra arguments."""

    def __init__(self, exe, extra):
        self.exe, self.extra = os.path.abspath(exe), extra

    def command(self, tmp, docroot, port, workers, stats, tls=None):
        tls_args = ["--tls-cert", tls[0], "--tls-key", tls[1]] if tls else []
        return [self.exe, "serve", "-d", docroot, "-p", str(port), "--host", "127.0.0.1",
                "--workers", str(workers)] + tls_args + self.extra


def parse_spec(spec):
    """(server, environment) of one SPEC."""
    spec, _, envs = spec.partition("|")
    env = dict(kv.partition("=")[::2] for kv in envs.split(";") if kv)
    name, _, rest = spec.partition("=")
    if not rest:
        if name not in B.SERVERS:
            sys.exit("unknown server %s (known: %s)" % (name, ", ".join(B.SERVERS)))
        return B.SERVERS[name], env
    exe, _, extra = rest.partition(":")
    return Build(exe, [a for a in extra.split(",") if a]), env


def main():
    if len(sys.argv) < 5 or sys.argv[1] not in B.CASES:
        sys.exit(__doc__)
    cid, rounds, seconds, specs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    case = B.CASES[cid]
    tool = os.environ.get("LOADGEN", "wrk")
    B.raise_nofile()
    procs = B.Procs(None)
    docroot = tempfile.mkdtemp(prefix="httpz-ab-")
    os.chmod(docroot, 0o755)
    rng = random.Random(1)
    for fname, size in B.FILES.values():
        path = os.path.join(docroot, fname)
        with open(path, "wb") as f:
            f.write(bytes(rng.getrandbits(8) for _ in range(size)))
        os.chmod(path, 0o644)
    fname = B.case_path(case)
    if case.get("body"):
        body = case["body"]
    else:
        with open(docroot + fname, "rb") as f:
            body = f.read()
    lua = os.path.join(docroot, "report.lua")
    with open(lua, "w") as f:
        f.write(B.WRK_LUA)
    tls = B.tls_files(docroot) if case.get("tls") else None
    rps, cpu_per_req, p99 = ({s: [] for s in specs} for _ in range(3))
    try:
        for _ in range(rounds):
            for spec in specs:
                server, env = parse_spec(spec)
                saved = dict(os.environ)
                os.environ.update(env)
                try:
                    run, err = B.start_server(procs, server, docroot, case["workers"], case["pin"],
                                              False, fname, body, tls)
                finally:
                    os.environ.clear()
                    os.environ.update(saved)
                if err:
                    sys.exit("%s: %s" % (spec, err))
                try:
                    B.run_wrk(procs, run.port, fname, case["conns"], 1, case["headers"], lua,
                              tls=bool(tls))
                    cpu0 = B.tree_cpu_seconds(run.proc.pid)
                    if tool == "h2load":
                        out, _rc, cpu, wall = B.run_h2load(procs, run.port, fname, case["conns"],
                                                           seconds, 0.5, case["headers"], tls=bool(tls))
                        res = B.parse_h2load(out, seconds)
                        lat = None
                    else:
                        out, _rc, cpu, wall = B.run_wrk(procs, run.port, fname, case["conns"],
                                                        seconds, case["headers"], lua, tls=bool(tls))
                        res = B.parse_wrk(out)
                        lat = res and res["latency_us"]["p99"]
                    scpu = (B.tree_cpu_seconds(run.proc.pid) - cpu0) / wall
                finally:
                    B.stop_server(procs, run)
                if not res:
                    sys.exit("%s: %s failed:\n%s" % (spec, tool, out[-500:]))
                rps[spec].append(res["rps"])
                cpu_per_req[spec].append(scpu * 1e6 / res["rps"])
                p99[spec].append(lat)
                print("%-36s %9.0f req/s  p99 %7s us  %s cpu %3.0f%%  server cpu %3.0f%%" % (
                    spec[:36], res["rps"], lat if lat is not None else "-", tool,
                    100 * cpu / wall, 100 * scpu), flush=True)
    finally:
        procs.stop_all()
        shutil.rmtree(docroot, ignore_errors=True)
    ref = specs[0]
    print("--- medians; ratios are per round, against %s" % ref)
    for s in specs:
        r = [a / b for a, b in zip(rps[s], rps[ref])]
        c = [a / b for a, b in zip(cpu_per_req[s], cpu_per_req[ref])]
        lat = [x for x in p99[s] if x is not None]
        print("%-36s %9.0f req/s  ratio %.3f [%.3f-%.3f]  server %.2f us/req  ratio %.3f "
              "[%.3f-%.3f]%s" % (
                  s[:36], statistics.median(rps[s]), statistics.median(r), min(r), max(r),
                  statistics.median(cpu_per_req[s]), statistics.median(c), min(c), max(c),
                  "  p99 %.0f us" % statistics.median(lat) if lat else ""))


if __name__ == "__main__":
    main()
