"""The HTTP/2 and WebSocket sections of the benchmark report (bench/report.py).

h2.json -- written by bench/server/bench_h2.py, schema "httpz-bench-h2/1":
  {"schema", "machine", "config": {"rounds", "duration_s", "command", ...},
   "versions": {server: str},
   "cases": [{"transport": "tls" | "h2c", "file": "612b" | "16k", "bytes": int,
              "streams": int (h2load -m), "server": str, "runs": [...],
              "rps": {"median", "min", "max"}, "cpu_us_per_request": {...},
              "errors": int}],
   "idle": [{"server", "transport", "connections", "kib_per_connection"} | {"error"}],
   "problems": [str]}

ws.json -- written by bench/ws/bench_ws.py, schema "httpz-bench-ws/1":
  {"schema", "machine", "config", "versions",
   "cases": [{"size": int, "server": str, "runs": [...], "rps": {...},
              "cpu_us_per_message": {...}, "errors": int}],
   "idle": [{"server", "connections", "kib_per_connection"} | {"error"}],
   "problems": [str]}
"""


def _med(s):
    return None if not s else s.get("median")


def _num(x, digits=0):
    return "–" if x is None else ("{:,.%df}" % digits).format(x)


def _us(x):
    return "–" if x is None else "%.2f µs" % x


def _round_ratio(a, b, key):
    """[a]'s [key] over [b]'s, per round, as "median× (min–max)". The runs
    of one round ran a few seconds apart; the machine's speed drifts over
    a whole run by more than the difference measured, so pairs of one
    round are compared, not medians of the whole run."""
    def per_round(c):
        return {r.get("round"): r.get(key) for r in (c or {}).get("runs", [])
                if "error" not in r and r.get(key)}
    ra, rb = per_round(a), per_round(b)
    if None in ra or None in rb:
        return "–"  # runs without their round: nothing to pair
    rs = sorted(ra[k] / rb[k] for k in ra if k in rb)
    if not rs:
        return "–"
    mid = len(rs) // 2
    med = rs[mid] if len(rs) % 2 else (rs[mid - 1] + rs[mid]) / 2
    return "%.2f× (%.2f–%.2f)" % (med, rs[0], rs[-1])


def _table(header, rows):
    out = ["", "| " + " | ".join(header) + " |",
           "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out + [""]


def _servers(doc, first):
    names = []
    for c in doc.get("cases", []):
        if c["server"] not in names:
            names.append(c["server"])
    return sorted(names, key=lambda n: (n != first, n))


def h2_section(doc, md, summ):
    cfg = doc.get("config", {})
    names = _servers(doc, "httpz")
    ref = "h2o"
    head = ["case"] + ["%s req/s" % n for n in names] + ["%s CPU/req" % n for n in names]
    if "httpz" in names and ref in names:
        head += ["httpz CPU/req vs h2o"]
    rows = []
    by = {(c["transport"], c["file"], c["streams"], c["server"]): c for c in doc.get("cases", [])}
    keys = []
    for c in doc.get("cases", []):
        k = (c["transport"], c["file"], c["streams"])
        if k not in keys:
            keys.append(k)
    for t, f, m in keys:
        cells = ["%s %s `-m %d`" % ("TLS h2" if t == "tls" else "h2c", f.replace("b", " B")
                                    .replace("16k", "16 KiB"), m)]
        for n in names:
            c = by.get((t, f, m, n))
            cells.append(_num(_med(c["rps"])) + (" (%d errors)" % c["errors"] if c and c["errors"]
                                                 else "") if c else "–")
        for n in names:
            c = by.get((t, f, m, n))
            cells.append(_us(_med(c["cpu_us_per_request"])) if c else "–")
        if "httpz" in names and ref in names:
            cells.append(_round_ratio(by.get((t, f, m, "httpz")), by.get((t, f, m, ref)),
                                      "cpu_us_per_request"))
        rows.append(cells)
    lines = ["### HTTP/2 (h2load)\n",
             "`%s`, 64 connections, server on one core, the median of %s interleaved rounds of "
             "%s s (`bench/server/bench_h2.py`). CPU/req is the server's CPU time per request; "
             "the ratio to h2o is the median (and range) of the per-round ratios."
             % (cfg.get("command", "h2load"), cfg.get("rounds", "?"), cfg.get("duration_s", "?"))]
    lines += _table(head, rows)
    idle = [r for r in doc.get("idle", [])]
    if idle:
        lines.append("Memory per idle HTTP/2 connection (RSS growth over %s connections that "
                     "made one request):" % next((r["connections"] for r in idle
                                                 if "connections" in r), "?"))
        irows = []
        for t in ("tls", "h2c"):
            cells = ["TLS h2" if t == "tls" else "h2c"]
            for n in names:
                r = next((r for r in idle if r["server"] == n and r["transport"] == t), None)
                cells.append("%.1f KiB" % r["kib_per_connection"] if r and "kib_per_connection"
                             in r else ("failed" if r else "–"))
            irows.append(cells)
        lines += _table(["transport"] + names, irows)
    vers = {k: v for k, v in doc.get("versions", {}).items() if k in names}
    if vers:
        lines.append("Versions: " + "; ".join("%s: %s" % (k, v) for k, v in sorted(vers.items()))
                     + ".\n")
    md.append("## HTTP/2\n")
    md += lines
    summ["h2"] = lines


def ws_section(doc, md, summ):
    cfg = doc.get("config", {})
    names = _servers(doc, "httpz")
    by = {(c["size"], c["server"]): c for c in doc.get("cases", [])}
    sizes = sorted({c["size"] for c in doc.get("cases", [])})
    head = ["message"] + ["%s round trips/s" % n for n in names] + \
        ["%s CPU/msg" % n for n in names]
    rows = []
    for size in sizes:
        cells = ["%d B" % size if size < 1024 else "%d KiB" % (size // 1024)]
        for n in names:
            c = by.get((size, n))
            cells.append(_num(_med(c["rps"])) + (" (%d errors)" % c["errors"] if c["errors"]
                                                 else "") if c else "–")
        for n in names:
            c = by.get((size, n))
            cells.append(_us(_med(c["cpu_us_per_message"])) if c else "–")
        rows.append(cells)
    lines = ["### WebSocket echo\n",
             "`%s`, server on one core, the median of %s interleaved rounds "
             "(`bench/ws/bench_ws.py`). CPU/msg is the server's CPU time per message echoed "
             "(one received, one sent)." % (cfg.get("command", "?"), cfg.get("rounds", "?"))]
    lines += _table(head, rows)
    idle = doc.get("idle", [])
    if idle:
        lines.append("Memory per idle WebSocket connection: " + ", ".join(
            "%s %s" % (r["server"], "%.1f KiB" % r["kib_per_connection"]
                       if "kib_per_connection" in r else "failed") for r in idle)
            + " (%s connections).\n" % next((r["connections"] for r in idle
                                             if "connections" in r), "?"))
    vers = {k: v for k, v in doc.get("versions", {}).items() if k in names}
    if vers:
        lines.append("Versions: " + "; ".join("%s: %s" % (k, v) for k, v in sorted(vers.items()))
                     + ".\n")
    md.append("## WebSocket\n")
    md += lines
    summ["ws"] = lines


def problems(doc, label):
    return ["%s: %s" % (label, p.splitlines()[0]) for p in doc.get("problems") or []] + \
        ["%s: %s" % (label, r["error"]) for r in doc.get("idle", []) if "error" in r]
