#!/usr/bin/env python3
"""Where an HTTP/2 server's CPU goes per request, and the least ratio to
h2o that this leaves httpz.

For each case of bench_h2.py (TLS h2 and h2c; 612 B and 16 KiB; `h2load
-t1 -c64 -m 10` and `-m 1`), httpz and h2o (placed as bench_h2.py places
them: one worker on SERVER_CPU, h2load on CLIENT_CPU) serve one `h2load -D
DURATION` run each while `perf record -e cpu-clock` samples the server's
processes. The samples are split by shared object into the kernel,
OpenSSL (libcrypto and libssl) and the rest (the server's own code, libc,
everything else); CPU per request is measured over the same run as
bench_h2.py measures it (perf's sampling costs both servers alike).

A server's *floor* is its CPU per request times the kernel's and OpenSSL's
share: what a request would cost if the server's own code and libc took no
time at all, the kernel and OpenSSL doing what they do now. Both servers
make the same system calls per request at `-m 1` (one read, one send; h2o
also a pread) and use the same libssl, so floor(httpz) / cpu(h2o) is the
least CPU-per-request ratio httpz can reach without fewer or cheaper
system calls, or less cryptography, per request than now. A goal below it
cannot be met by making httpz's own code faster; "cut for 0.8x" is the
part of httpz's own code and libc that would have to go to reach 0.8 times
h2o's CPU per request (over 100 %: out of reach that way).

Rounds are interleaved (httpz, h2o, then the next case). CPU per request
and the shares are medians of ROUNDS; the ratios are medians of the
per-round ratios (a round's two runs are seconds apart, while this
machine's speed drifts by more than the difference over a whole run).
Needs `perf` (Debian's linux-perf, in scripts/deps.sh bench) and the
right to sample another process (root, or perf_event_paranoid <= 1).
Results go to bench/results/h2_floor.json (not read by report.py: the
README's tables come from `make bench`). Usage:
  h2_floor.py [--rounds 3] [--duration 3.0] [--transports tls,h2c] [--out FILE]
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_servers as B  # noqa: E402
import bench_h2 as H  # noqa: E402

SCHEMA = "httpz-bench-h2-floor/1"
SERVERS = ["httpz", "h2o"]


def kind_of(dso):
    """The part of the CPU a shared object's samples count in: the kernel
    and its modules ([kernel.kallsyms], [nf_conntrack], ...), OpenSSL, or
    the rest ([vdso] and unknown addresses too: user space)."""
    if dso.startswith("[") and dso not in ("[vdso]", "[unknown]"):
        return "kernel"
    if dso.startswith("libcrypto") or dso.startswith("libssl"):
        return "openssl"
    return "rest"


def shares(perf_data):
    """{kernel, openssl, rest}: fractions of the samples in perf_data."""
    out = subprocess.run(["perf", "report", "-i", perf_data, "--stdio", "--sort", "dso",
                          "--percent-limit", "0"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         timeout=120).stdout
    parts = {"kernel": 0.0, "openssl": 0.0, "rest": 0.0}
    for line in out.splitlines():
        m = re.match(r"\s*([0-9.]+)%\s+(\S+)", line)
        if m:
            parts[kind_of(m.group(2))] += float(m.group(1)) / 100
    total = sum(parts.values())
    return {k: v / total for k, v in parts.items()} if total > 0 else None


def one_run(procs, run, path, streams, duration, warmup, tmp):
    """h2load for warmup + duration; perf samples the server's processes over
    the timed part. The run's CPU per request and the three shares."""
    data = os.path.join(tmp, "perf.data")
    # A file left by an earlier run must not stand in for this one's.
    if os.path.exists(data):
        os.unlink(data)
    pids = [run.proc.pid] + B.tree_pids(run.proc.pid)
    perf = {}

    def record():
        perf["p"] = subprocess.Popen(
            ["perf", "record", "-q", "-e", "cpu-clock", "-F", "2999", "-o", data,
             "-p", ",".join(str(p) for p in pids), "--", "sleep", "%.2f" % (duration * 0.9)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    timer = threading.Timer(warmup, record)
    timer.start()
    perf_err = None
    try:
        res = H.h2load(procs, run, path, streams, duration, warmup)
    finally:
        timer.cancel()
        timer.join()
        p = perf.get("p")
        if p is not None:
            try:
                perf_err = p.communicate(timeout=30)[1]
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
                perf_err = "perf record did not stop"
    if "error" in res:
        return res
    if "p" not in perf:
        return {"error": "perf record did not start (h2load ended within its warm-up)"}
    if perf["p"].returncode != 0 or not os.path.exists(data):
        return {"error": "perf record failed (exit %s): %s"
                         % (perf["p"].returncode, (perf_err or "").strip()[-300:])}
    sh = shares(data)
    if sh is None:
        return {"error": "perf recorded nothing"}
    cpu = res["cpu_us_per_request"]
    return {"rps": res["rps"], "cpu_us_per_request": cpu, "shares": sh,
            "floor_us_per_request": cpu * (sh["kernel"] + sh["openssl"]) if cpu else None}


def compare(httpz_runs, h2o_runs):
    """Per round (the two servers' runs of a round are seconds apart; the
    machine's speed drifts more than that over the whole run), httpz's CPU
    per request over h2o's, its floor over h2o's, and the part of httpz's
    own code and libc that would have to go for 0.8 times h2o's (over 1:
    out of reach); the medians of those."""
    by_round = {r["round"]: r for r in h2o_runs if "error" not in r}
    ratio, floor, cut = [], [], []
    for z in httpz_runs:
        o = by_round.get(z["round"]) if "error" not in z else None
        if not o or not o["cpu_us_per_request"] or not z["cpu_us_per_request"]:
            continue
        cz, co, fz = z["cpu_us_per_request"], o["cpu_us_per_request"], z["floor_us_per_request"]
        ratio.append(cz / co)
        floor.append(fz / co)
        if cz > fz:
            cut.append(max(0.0, cz - 0.8 * co) / (cz - fz))
    out = {}
    if ratio:
        out["ratio"] = statistics.median(ratio)
        out["floor_ratio"] = statistics.median(floor)
    if cut:
        out["cut_for_0_8"] = statistics.median(cut)
    return out


def median(rows, key):
    vals = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--warmup", type=float, default=0.5)
    ap.add_argument("--transports", default="tls,h2c")
    ap.add_argument("--out", default=os.path.join(B.ROOT, "bench", "results", "h2_floor.json"))
    args = ap.parse_args()
    if not shutil.which("perf"):
        sys.exit("h2_floor.py: perf is not installed (scripts/deps.sh bench installs linux-perf)")
    B.raise_nofile()
    procs = B.Procs(None)
    tmp = tempfile.mkdtemp(prefix="httpz-h2-floor-")
    os.chmod(tmp, 0o755)
    docroot = os.path.join(tmp, "doc")
    os.mkdir(docroot)
    bodies = H.write_files(docroot)
    tls_pair = B.tls_files(tmp)
    result = {"schema": SCHEMA, "machine": B.machine_info(),
              "config": {"rounds": args.rounds, "duration_s": args.duration,
                         "warmup_s": args.warmup, "server_cpu": B.SERVER_CPU,
                         "client_cpu": B.CLIENT_CPU,
                         "command": "h2load -t1 -c64 -m M -D %s --warm-up-time %s URL; "
                                    "perf record -e cpu-clock -p SERVER"
                                    % (B.ms(args.duration), B.ms(args.warmup))},
              "versions": {}, "cases": [], "problems": []}
    try:
        for transport in [t for t in args.transports.split(",") if t]:
            tls = tls_pair if transport == "tls" else None
            runs = {}
            for name in SERVERS:
                server = H.SERVERS[name]
                ok, why = server.available()
                if not ok:
                    result["problems"].append("%s: %s" % (name, why))
                    continue
                result["versions"][name] = server.version()
                run, err = H.start(procs, server, docroot, tls, *bodies["612b"])
                if run is None:
                    result["problems"].append("%s over %s: %s" % (name, transport, err))
                    continue
                runs[name] = run
            try:
                samples = {(f, m, s): [] for f, m in H.CASES for s in runs}
                for rnd in range(args.rounds):
                    for f, m in H.CASES:
                        for s in runs:
                            r = one_run(procs, runs[s], bodies[f][0], m, args.duration,
                                        args.warmup, tmp)
                            r["round"] = rnd
                            samples[(f, m, s)].append(r)
                    B.log("h2 floor %s: round %d/%d done" % (transport, rnd + 1, args.rounds))
                for f, m in H.CASES:
                    row = {"transport": transport, "file": f, "streams": m, "servers": {}}
                    for s in runs:
                        rs = samples[(f, m, s)]
                        good = [r for r in rs if "error" not in r]
                        result["problems"] += ["%s %s -m %d, %s, round %d: %s"
                                               % (transport, f, m, s, r["round"], r["error"])
                                               for r in rs if "error" in r]
                        row["servers"][s] = {
                            "runs": rs,
                            "cpu_us_per_request": median(good, "cpu_us_per_request"),
                            "floor_us_per_request": median(good, "floor_us_per_request"),
                            "shares": {k: statistics.median([r["shares"][k] for r in good])
                                       for k in ("kernel", "openssl", "rest")} if good else None}
                    row.update(compare(samples.get((f, m, "httpz"), []),
                                       samples.get((f, m, "h2o"), [])))
                    result["cases"].append(row)
            finally:
                for run in runs.values():
                    B.stop_server(procs, run)
    finally:
        procs.stop_all()
        shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print("| case | httpz µs/req | kernel | OpenSSL | own code, libc | h2o µs/req | kernel "
          "| OpenSSL | own code, libc | httpz ÷ h2o | floor ÷ h2o | cut for 0.8× |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c in result["cases"]:
        cells = []
        for s in SERVERS:
            d = c["servers"].get(s)
            if not d or not d["shares"]:
                cells += ["—"] * 4
                continue
            cells += ["%.2f" % d["cpu_us_per_request"]] + \
                     ["%.0f %%" % (100 * d["shares"][k]) for k in ("kernel", "openssl", "rest")]
        ratio = ("%.2f×" % c["ratio"]) if "ratio" in c else "—"
        floor = ("%.2f×" % c["floor_ratio"]) if "floor_ratio" in c else "—"
        cut = ("%.0f %%" % (100 * c["cut_for_0_8"])) if c.get("cut_for_0_8") is not None else "—"
        print("| %s %s `-m %d` | %s | %s | %s | %s |" % (
            "TLS" if c["transport"] == "tls" else "h2c", c["file"].replace("612b", "612 B")
            .replace("16k", "16 KiB"), c["streams"], " | ".join(cells), ratio, floor, cut))
    for p in result["problems"]:
        B.log("problem: " + p)


if __name__ == "__main__":
    main()
