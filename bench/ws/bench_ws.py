#!/usr/bin/env python3
"""WebSocket benchmark: httpz's examples/ws_echo against Node's `ws` and Go's
gorilla/websocket, side by side in one run.

Each server is an echo server (every message back with its own type) on one
core (SERVER_CPU; Go with GOMAXPROCS=1, Node is single-threaded anyway,
httpz with one worker on io_uring). The load generator
(bench/ws/go/load, gorilla's client) runs pinned to CLIENT_CPU: 64
connections, each sends a binary message, waits for its echo and sends the
next. Cases: 32 B and 16 KiB messages, in interleaved rounds (per round each
case once against every server, the order rotating). Server CPU per message
is the server tree's utime+stime over the timed part divided by the round
trips counted.

Also: memory per idle WebSocket connection (N connections opened by the load
generator's idle mode, growth of the server's RSS divided by N).

The peers are built on demand by bench/ws/peers.sh (Go module proxy, npm).
Results: bench/results/ws.json (schema "httpz-bench-ws/1"); bench/report.py
makes them a table. Usage:
  bench_ws.py [--rounds 5] [--duration 1.0] [--idle 10000] [--out FILE]
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "server"))
import bench_servers as B  # noqa: E402

SCHEMA = "httpz-bench-ws/1"
PEERS = os.path.join(B.ROOT, "_build", "ws-peers")
WS_ECHO = os.path.join(B.ROOT, "_build", "default", "examples", "ws_echo.exe")
LOAD = os.path.join(PEERS, "load")
SIZES = [32, 16384]


def servers(port):
    """name -> argv of an echo server on 127.0.0.1:port."""
    return {
        "httpz": [WS_ECHO, "-p", str(port)],
        "node-ws": ["node", os.path.join(HERE, "node", "echo.js"), str(port)],
        "gorilla": [os.path.join(PEERS, "echo"), "-p", str(port)],
    }


def versions():
    node = B.run_text(["node", "--version"])
    ws = "?"
    try:
        with open(os.path.join(HERE, "node", "node_modules", "ws", "package.json")) as f:
            ws = json.load(f)["version"]
    except (OSError, ValueError, KeyError):
        pass
    gorilla = "?"
    try:
        with open(os.path.join(HERE, "go", "go.mod")) as f:
            for line in f:
                if "gorilla/websocket" in line:
                    gorilla = line.split()[-1]
    except OSError:
        pass
    return {"httpz": "examples/ws_echo (%s)" % B.machine_commit(),
            "node-ws": "Node %s, ws %s" % (node, ws),
            "gorilla": "gorilla/websocket %s, %s" % (gorilla, B.run_text(["go", "version"]))}


def wait_port(port, proc, limit=15):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return "exited with status %s" % proc.returncode
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return None
        except OSError:
            time.sleep(0.05)
    return "no listener on port %d" % port


def start(procs, name):
    port = B.free_port()
    argv = servers(port)[name]
    env = dict(os.environ, GOMAXPROCS="1")
    proc = procs.spawn(B.pinned(B.SERVER_CPU, argv), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env)
    err = wait_port(port, proc)
    if err:
        procs.stop(proc)
        return None, err
    return (proc, port), None


def echo_run(procs, run, size, duration, warmup):
    proc, port = run
    argv = [LOAD, "-url", "ws://127.0.0.1:%d/" % port, "-c", "64", "-size", str(size),
            "-d", B.ms(duration), "-warmup", B.ms(warmup)]
    out, rc, cpu = B.loadgen_server_cpu(procs, argv, proc.pid, warmup, duration, slack=20)
    try:
        res = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": "load generator failed (exit %d): %s" % (rc, out.strip()[-300:])}
    if cpu is None or res["round_trips"] <= 0:
        return {"error": "no round trips: %s" % out.strip()[-300:]}
    res["rps"] = res["round_trips"] / res["seconds"]
    res["server_cpu_s"] = cpu
    # One round trip is one message received and one sent by the server.
    res["cpu_us_per_message"] = cpu * 1e6 / res["round_trips"]
    return res


def idle_memory(procs, name, n):
    run, err = start(procs, name)
    if run is None:
        return {"error": err}
    proc, port = run
    try:
        # A few connections first, so that one-time allocations (buffers,
        # the first connection's structures) are not counted per connection.
        warm = procs.spawn(B.pinned(B.CLIENT_CPU, [LOAD, "-url", "ws://127.0.0.1:%d/" % port,
                                                   "-idle", "50"]),
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if not warm.stdout.readline().startswith("ready"):
            return {"error": "warm-up connections failed"}
        time.sleep(0.3)
        before = B.tree_rss_kib(proc.pid)
        load = procs.spawn(B.pinned(B.CLIENT_CPU, [LOAD, "-url", "ws://127.0.0.1:%d/" % port,
                                                   "-idle", str(n)]),
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        got = []
        t = threading.Thread(target=lambda: got.append(load.stdout.readline()))
        t.start()
        t.join(60)
        if not got or not got[0].startswith("ready"):
            return {"error": "the %d idle connections did not open within 60 s" % n}
        time.sleep(0.5)
        after = B.tree_rss_kib(proc.pid)
        for p in (load, warm):
            p.stdin.close()
            procs.stop(p, grace=5.0)
        return {"connections": n, "rss_before_kib": before, "rss_after_kib": after,
                "kib_per_connection": (after - before) / n}
    finally:
        procs.stop(proc)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--duration", type=float, default=1.0)
    ap.add_argument("--warmup", type=float, default=0.3)
    ap.add_argument("--idle", type=int, default=10000)
    ap.add_argument("--servers", default="httpz,node-ws,gorilla")
    ap.add_argument("--out", default=os.path.join(B.ROOT, "bench", "results", "ws.json"))
    ap.add_argument("--pidfile")
    args = ap.parse_args()
    B.raise_nofile()
    procs = B.Procs(args.pidfile)
    result = {"schema": SCHEMA, "machine": B.machine_info(),
              "config": {"rounds": args.rounds, "duration_s": args.duration,
                         "warmup_s": args.warmup, "connections": 64,
                         "server_cpu": B.SERVER_CPU, "client_cpu": B.CLIENT_CPU,
                         "command": "bench/ws/go/load -c 64 -size N -d %s -warmup %s"
                                    % (B.ms(args.duration), B.ms(args.warmup))},
              "versions": versions(), "cases": [], "idle": [], "problems": []}
    names = [s for s in args.servers.split(",") if s]
    if not os.path.exists(LOAD):
        result["problems"].append("load generator not built (bench/ws/peers.sh)")
        names = []
    runs = {}
    try:
        for name in names:
            argv0 = servers(0)[name][0]
            if not (os.path.exists(argv0) or B.shutil.which(argv0)):
                result["problems"].append("%s: %s not built" % (name, argv0))
                continue
            run, err = start(procs, name)
            if run is None:
                result["problems"].append("%s: did not start: %s" % (name, err))
                continue
            runs[name] = run
        samples = {(size, s): [] for size in SIZES for s in runs}
        order = list(runs)
        for rnd in range(args.rounds):
            for size in SIZES:
                for s in order:
                    r = echo_run(procs, runs[s], size, args.duration, args.warmup)
                    r["round"] = rnd
                    samples[(size, s)].append(r)
                order = order[1:] + order[:1]
            B.log("ws: round %d/%d done" % (rnd + 1, args.rounds))
        for size in SIZES:
            for s in runs:
                rs = samples[(size, s)]
                good = [r for r in rs if "error" not in r]
                result["cases"].append({
                    "size": size, "server": s, "runs": rs,
                    "rps": B.summarise([r["rps"] for r in good]),
                    "cpu_us_per_message": B.summarise([r["cpu_us_per_message"] for r in good]),
                    "errors": sum(r.get("errors", 0) for r in good) + len(rs) - len(good)})
    finally:
        for proc, _ in runs.values():
            procs.stop(proc)
    try:
        if args.idle > 0:
            for name in runs:
                r = idle_memory(procs, name, args.idle)
                r["server"] = name
                result["idle"].append(r)
    finally:
        procs.stop_all()
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    for c in result["cases"]:
        B.log("%6d B %-8s %9.0f round trips/s %6.2f us/msg  errors %d" % (
            c["size"], c["server"], (c["rps"] or {}).get("median", 0),
            (c["cpu_us_per_message"] or {}).get("median") or 0, c["errors"]))
    for r in result["idle"]:
        B.log("idle %s: %s" % (r["server"], "%.1f KiB/conn" % r["kib_per_connection"]
                               if "kib_per_connection" in r else r.get("error")))
    for p in result["problems"]:
        B.log("problem: " + p)


if __name__ == "__main__":
    main()
