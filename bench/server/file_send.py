#!/usr/bin/env python3
"""File bodies without a copy into user space: sendfile on readiness
against io_uring splice, with a copy through user space as the reference.

    bench/server/file_send.py [ROUNDS] [SECONDS]

Builds file_send.c (next to this script; needs liburing-dev) into a
temporary directory, then for each file size runs the three modes
interleaved, ROUNDS times (default 7), each run sending about SECONDS
(default 1) worth of copies of the file over loopback TCP with
TCP_NOTSENT_LOWAT 16 KiB as `httpz serve` sets it. The sender is pinned
to CPU 0 (where the server runs in `make bench`), the reader to CPU 1.
Prints, per size and mode, the median sender CPU per MiB (its whole
thread group: io_uring's io-wq workers count), MiB/s and system calls per
file, and the ratio to sendfile's CPU per MiB (median of the per-round
ratios). Only ratios within one run mean anything on a shared machine.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile

MODES = ["sendfile", "splice", "copy"]
SIZES = [128 * 1024, 1024 * 1024, 16 * 1024 * 1024]


def build(tmp):
    exe = os.path.join(tmp, "file_send")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "file_send.c")
    subprocess.run(["cc", "-O2", "-Wall", "-o", exe, src, "-luring"], check=True)
    return exe


def run(exe, mode, size, count):
    out = subprocess.run(["taskset", "-c", "0", exe, mode, str(size), str(count), "16384"],
                         check=True, capture_output=True, text=True, timeout=120)
    return json.loads(out.stdout)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    with tempfile.TemporaryDirectory(prefix="httpz-file-send.") as tmp:
        exe = build(tmp)
        print("%-9s %-9s %14s %10s %14s %16s" % ("size", "mode", "CPU us/MiB", "MiB/s",
                                                  "syscalls/file", "CPU vs sendfile"))
        for size in SIZES:
            # Calibrate the count so that a sendfile run lasts about SECONDS.
            probe = run(exe, "sendfile", size, max(1, (64 << 20) // size))
            count = max(1, int(probe["count"] * seconds / max(probe["wall_s"], 1e-3)))
            results = {m: [] for m in MODES}
            for r in range(rounds):
                order = MODES[r % 3:] + MODES[:r % 3]
                for m in order:
                    results[m].append(run(exe, m, size, count))
            for m in MODES:
                rs = results[m]
                cpu = statistics.median(x["cpu_us_per_mib"] for x in rs)
                rate = statistics.median(x["mib_per_s"] for x in rs)
                calls = statistics.median(x["syscalls"] / x["count"] for x in rs)
                ratio = statistics.median(a["cpu_us_per_mib"] / b["cpu_us_per_mib"]
                                          for a, b in zip(rs, results["sendfile"]))
                label = "%d KiB" % (size // 1024) if size < 1 << 20 else "%d MiB" % (size >> 20)
                print("%-9s %-9s %14.1f %10.0f %14.1f %15.2fx" % (label, m, cpu, rate, calls, ratio))


if __name__ == "__main__":
    main()
