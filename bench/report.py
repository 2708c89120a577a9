#!/usr/bin/env python3
"""Turn the benchmark JSON in bench/results/ into REPORT.md, summary.md and charts.

Standard library only; charts need gnuplot (PNG via pngcairo when available,
else SVG) and are skipped with a note when it is missing.

Inputs (every *.json in the results directory, recognised by "schema" or name):

servers.json  -- written by bench/server/bench_servers.py, schema
                 "httpz-bench-servers/1" (see bench/README.md).

parse.json    -- written by _build/default/bench/parse/bench_parse.exe --json.
                 Schema "httpz-bench-parse/1", defined here:
  {
    "schema":  "httpz-bench-parse/1",
    "mode":    "quick" | "full",
    "machine": {"uname": str, "nproc": int, "cpu": str, "commit": str,
                "ocaml": str, "pinned_cpu": int | null},
    "config":  {...free-form: iterations, runs, warm-up...},
    "results": [
      {"impl":         "httpz" | "cohttp" | "http_parser" | ...,
       "request":      "small" | "medium" | "large" | "headers50" | ...,
       "bytes":        int,                      # size of the request head
       "ns_per_op":    {"median": float, "min": float, "max": float},
       "runs":         [float, ...],             # optional: ns/op of every run
       "words_per_op": float | null,             # minor words allocated per parse
                                                 # (null: not measurable, e.g. C)
       "instructions": int | null}               # per parse (valgrind/perf), or null
    ],
    "response": [                                # optional: response-head writer
      {"impl": str, "case": "full_head" | "status_line" | ..., "bytes": int,
       "ns_per_op": {...}, "runs": [...], "words_per_op": float | null,
       "instructions": int | null}
    ],
    "instructions": [                            # optional, measured apart (callgrind):
      {"impl": str, "request" | "case": str,     # bench/parse/instructions.sh --merge
       "instructions" | "per_parse" | "per_op": number}
    ]                                            # fills "instructions": null above
  }
  "httpz" is the subject; every other impl is a peer. Unknown extra fields are ignored.

latency.json  -- latency under GC pressure, schema "httpz-bench-latency/1":
  {"schema": "httpz-bench-latency/1", "machine": {...}, "description": str,
   "results": [{"impl": str, "p50": ns, "p99": ns, "p99.9": ns, "p99.99": ns,
                "max": ns, "histogram": [[ns, count], ...]}]}
  All latencies in nanoseconds; histogram buckets are [upper bound, count].

Usage: report.py [RESULTS_DIR]   (default: bench/results next to this script)
"""

import glob
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SUBJECT = "httpz"
# Two results are "too close to call" when their run ranges [min, max]
# intersect, or when their medians are within this fraction (the floor for
# single-run quick mode, where min = max = median).
CLOSE = 0.03
SERVER_ORDER = ["httpz", "nginx", "lighttpd", "h2o", "cohttp"]
REQUEST_ORDER = ["small", "medium", "large", "headers50"]


# ------------------------------------------------------------- formatting ---

def f_int(x):
    return "–" if x is None else "{:,.0f}".format(x)


def f_us(x):
    """Microseconds, human scale."""
    if x is None:
        return "–"
    if x >= 1e6:
        return "%.2f s" % (x / 1e6)
    if x >= 1e3:
        return "%.2f ms" % (x / 1e3)
    return "%.0f µs" % x


def f_ns(x):
    if x is None:
        return "–"
    if x >= 1e9:
        return "%.2f s" % (x / 1e9)
    if x >= 1e6:
        return "%.2f ms" % (x / 1e6)
    if x >= 1e4:
        return "%.1f µs" % (x / 1e3)
    if x < 100:
        return "%.1f ns" % x
    return "%.0f ns" % x


def f_ratio(x):
    return "–" if x is None else "%.2f×" % x


def f_pct(x):
    return "–" if x is None else "%.0f%%" % (100 * x)


def f_num(x, digits=1):
    if x is None:
        return "–"
    return ("{:,.%df}" % digits).format(x)


def med(s):
    return None if not s else s.get("median")


def table(header, rows):
    out = ["", "| " + " | ".join(header) + " |",
           "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out) + "\n"


def too_close(a, b):
    """a, b: {"median","min","max"} of a higher-is-better metric."""
    if not a or not b:
        return False
    if a["min"] <= b["max"] and b["min"] <= a["max"]:
        return True
    hi = max(a["median"], b["median"])
    return hi > 0 and abs(a["median"] - b["median"]) / hi < CLOSE


# ---------------------------------------------------------------- gnuplot ---

class Plot:
    def __init__(self, chartdir):
        self.dir = chartdir
        self.gnuplot = shutil.which("gnuplot")
        self.ext = None
        self.note = None
        if not self.gnuplot:
            self.note = "gnuplot not installed: no charts (scripts/deps.sh bench installs gnuplot-nox)."
            return
        terms = subprocess.run([self.gnuplot, "-e", "set terminal"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True).stdout
        if "pngcairo" in terms:
            self.term, self.ext = "pngcairo noenhanced size 960,520 font 'sans,10'", "png"
        else:
            self.term, self.ext = "svg noenhanced size 960,520 font 'sans,10'", "svg"
        os.makedirs(chartdir, exist_ok=True)

    def draw(self, name, data, script):
        """data: {filename: text}; script: gnuplot commands after the terminal.
        Returns the chart's path relative to the results dir, or None."""
        if not self.ext:
            return None
        for fn, text in data.items():
            with open(os.path.join(self.dir, fn), "w") as f:
                f.write(text)
        out = "%s.%s" % (name, self.ext)
        full = "set terminal %s\nset output '%s'\nset datafile missing '?'\n%s\n" % (
            self.term, out, script)
        gp = os.path.join(self.dir, name + ".gp")
        with open(gp, "w") as f:
            f.write(full)
        p = subprocess.run([self.gnuplot, name + ".gp"], cwd=self.dir, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            self.note = "gnuplot failed on %s: %s" % (name, p.stdout.strip()[:300])
            return None
        return os.path.join(os.path.basename(self.dir), out)


def gp_str(s):
    # Terminals are noenhanced, so "_" stays literal; quotes would end the string.
    return s.replace("\\", "/").replace('"', "").replace("'", "")


# ---------------------------------------------------------------- servers ---

def server_results(case):
    """[(name, result)] for results that have numbers, in SERVER_ORDER."""
    res = [r for r in case["results"] if r.get("summary")]
    return sorted(res, key=lambda r: SERVER_ORDER.index(r["server"])
                  if r["server"] in SERVER_ORDER else 99)


def best_peer(case):
    peers = [r for r in server_results(case) if r["server"] != SUBJECT]
    if not peers:
        return None
    return max(peers, key=lambda r: r["summary"]["rps"]["median"])


def server_section(doc, plot, md, summary_rows):
    m = doc.get("machine", {})
    cfg = doc.get("config", {})
    md.append("## Static file serving under load (`%s` mode)\n" % doc.get("mode", "?"))
    md.append("Server pinned to CPU %s, load generator (`%s`, 1 thread) pinned to CPU %s; "
              "%s run(s) of %s s per server and case after a %s s warm-up; medians shown with "
              "the min–max of the runs. Ratios are against the best peer (the fastest server "
              "other than httpz) of the same case. **≈** marks results too close to call: "
              "their run ranges overlap or their medians differ by less than %d%%. "
              "Latency is measured by a closed-loop generator (wrk), so it is the latency *at "
              "the throughput reached*, not at a fixed rate.\n"
              % (cfg.get("server_cpu"), cfg.get("wrk", "wrk"), cfg.get("client_cpu"),
                 cfg.get("runs"), cfg.get("duration_s"), cfg.get("warmup_s"), 100 * CLOSE))
    for name, s in doc.get("servers", {}).items():
        if not s.get("available"):
            md.append("- **%s: %s** — no numbers for it in this report.\n" % (name, s.get("reason")))
    md.append("")
    chart_pos = len(md)
    ratio_rows = []
    for case in doc.get("cases", []):
        md.append("### %s — %s\n" % (case["id"], case["description"]))
        extra = []
        if case.get("headers"):
            extra.append("request headers: `%s`" % "`, `".join(case["headers"]))
        extra.append("%d connection(s), load generator %s" % (case["connections"], case["loadgen"]))
        if not case.get("server_pinned", True):
            extra.append("server not pinned (may share the load generator's core)")
        md.append("_" + "; ".join(extra) + "_\n")
        best = best_peer(case)
        results = server_results(case)
        ranked = sorted(results, key=lambda r: -r["summary"]["rps"]["median"])
        rows = []
        for r in results:
            s = r["summary"]
            rps = s["rps"]
            lat = s.get("latency_us", {})
            ratio = rps["median"] / best["summary"]["rps"]["median"] if best else None
            notes = []
            i = ranked.index(r)
            if i > 0 and too_close(rps, ranked[i - 1]["summary"]["rps"]):
                notes.append("≈ %s" % ranked[i - 1]["server"])
            if i + 1 < len(ranked) and too_close(rps, ranked[i + 1]["summary"]["rps"]):
                notes.append("≈ %s" % ranked[i + 1]["server"])
            lg = med(s.get("loadgen_cpu"))
            if lg is not None and lg >= doc.get("config", {}).get("saturation_threshold", 0.9):
                notes.append("load generator saturated")
            if r.get("errors"):
                notes.append("**%d failed requests**" % r["errors"])
            bpr = [x.get("bytes_per_response") for x in r.get("runs", []) if x.get("bytes_per_response")]
            rows.append([
                "**%s**" % r["server"] if r["server"] == SUBJECT else r["server"],
                f_int(rps["median"]),
                "%s–%s" % (f_int(rps["min"]), f_int(rps["max"])),
                f_ratio(ratio) if r is not best else "1.00× (best peer)",
                f_us(med(lat.get("p50"))), f_us(med(lat.get("p90"))), f_us(med(lat.get("p99"))),
                f_us(med(lat.get("p99.9"))),
                f_pct(lg), f_pct(med(s.get("server_cpu"))),
                f_int(bpr[0]) if bpr else "–",
                "; ".join(notes)])
            ratio_rows.append((case["id"], r["server"], ratio,
                               rps["min"] / best["summary"]["rps"]["median"] if best else None,
                               rps["max"] / best["summary"]["rps"]["median"] if best else None))
        skipped = [r for r in case["results"] if not r.get("summary")]
        if rows:
            md.append(table(["server", "req/s", "min–max", "vs best peer", "p50", "p90", "p99",
                             "p99.9", "loadgen CPU", "server CPU", "bytes/resp", "notes"], rows))
        for r in skipped:
            if doc.get("servers", {}).get(r["server"], {}).get("available", True):
                md.append("- %s: %s\n" % (r["server"], r.get("skipped", "no successful run")))
        if case.get("loadgen_saturated"):
            md.append("wrk used ≥ %d%% of its core against %s: throughput there is bounded by the "
                      "load generator; see the h2load case below for a second opinion.\n"
                      % (100 * doc["config"].get("saturation_threshold", 0.9),
                         ", ".join(case["loadgen_saturated"])))
        chart = latency_chart(plot, case)
        if chart:
            md.append("![latency %s](%s)\n" % (case["id"], chart))
        # summary: httpz vs the best peer, per case
        hz = next((r for r in results if r["server"] == SUBJECT), None)
        summary_rows.append([
            "%s (%s)" % (case["description"], case["loadgen"]),
            f_int(hz["summary"]["rps"]["median"]) if hz else "not built" if not doc["servers"].get(SUBJECT, {}).get("available") else "–",
            "%s %s" % (best["server"], f_int(best["summary"]["rps"]["median"])) if best else "–",
            (f_ratio(hz["summary"]["rps"]["median"] / best["summary"]["rps"]["median"])
             + (" ≈" if too_close(hz["summary"]["rps"], best["summary"]["rps"]) else ""))
            if hz and best else "–",
            "%s / %s" % (f_us(med(hz["summary"]["latency_us"].get("p99"))),
                         f_us(med(best["summary"]["latency_us"].get("p99"))))
            if hz and best else "–"])
    chart = rps_chart(plot, doc.get("cases", []), ratio_rows)
    if chart:
        md.insert(chart_pos,
                  "Throughput relative to the best peer of each case (1.0 = best peer; bars "
                  "show min–max of the runs):\n\n![throughput](%s)\n" % chart)
    gc_section(doc, md, summary_rows)
    if doc.get("problems"):
        md.append("### Problems during the run\n")
        for p in doc["problems"]:
            md.append("- `%s`" % p.splitlines()[0])
        md.append("")


def rps_chart(plot, cases, ratio_rows):
    if not ratio_rows:
        return None
    servers = [s for s in SERVER_ORDER if any(r[1] == s for r in ratio_rows)]
    lines = ["# case " + " ".join("%s %s_min %s_max" % (s, s, s) for s in servers)]
    for c in cases:
        vals = []
        for s in servers:
            r = next((x for x in ratio_rows if x[0] == c["id"] and x[1] == s), None)
            vals += ["%.4f %.4f %.4f" % (r[2], r[3], r[4]) if r and r[2] is not None else "? ? ?"]
        lines.append('"%s" %s' % (gp_str(c["id"]), " ".join(vals)))
    plots = ", ".join("'rps.dat' using %d:%d:%d%s title '%s'" % (
        2 + 3 * i, 3 + 3 * i, 4 + 3 * i, ":xtic(1)" if i == 0 else "", s)
        for i, s in enumerate(servers))
    top = max([r[4] for r in ratio_rows if r[4] is not None] + [1.0]) * 1.1
    script = """set title "Requests/s relative to the best peer (1.0 = best peer), median and min-max of runs"
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set yrange [0:%.3f]
set grid ytics
set xtics rotate by -20
set key outside right
set ylabel "relative throughput"
plot %s, 1 with lines dashtype 2 lc rgb "gray" notitle
""" % (top, plots)
    return plot.draw("rps", {"rps.dat": "\n".join(lines) + "\n"}, script)


def latency_chart(plot, case):
    results = server_results(case)
    pcts = ["p50", "p90", "p99", "p99.9"]
    if not results or not all(r["summary"].get("latency_us", {}).get("p99.9") for r in results):
        return None
    lines = ["# percentile " + " ".join(r["server"] for r in results)]
    for i, p in enumerate(pcts):
        lines.append('%d "%s" %s' % (i, p, " ".join(
            "%.1f" % max(1.0, med(r["summary"]["latency_us"][p])) for r in results)))
    fn = "latency_%s" % case["id"]
    plots = ", ".join("'%s.dat' using 1:%d:xtic(2) with linespoints lw 2 title '%s'" % (
        fn, 3 + i, r["server"]) for i, r in enumerate(results))
    script = """set title "Latency percentiles: %s (median of runs)"
set logscale y
set grid ytics mytics
set ylabel "latency (µs, log scale)"
set xrange [-0.3:3.3]
set key outside right
plot %s
""" % (gp_str(case["description"]), plots)
    return plot.draw(fn, {fn + ".dat": "\n".join(lines) + "\n"}, script)


def gc_section(doc, md, summary_rows):
    gc = doc.get("gc", [])
    if not gc:
        return
    md.append("### GC behaviour under load\n")
    md.append("Servers that report OCaml GC statistics over HTTP (httpz `--stats` at "
              "`/__httpz/stats`, the cohttp peer at `/__stats`), read before and after one wrk run "
              "after warm-up, divided by the requests the server counted (wrk's own count misses "
              "the up to one-per-connection requests in flight when it stops). The stats "
              "requests themselves are included (negligible against the run). Major words "
              "include buffers allocated directly in the major heap (over 256 words).\n")
    rows = []
    for g in gc:
        if g.get("skipped"):
            rows.append([g["server"], g["case"], g["skipped"].split(" (")[0]] + [""] * 6)
            continue
        p = g.get("per_100k_requests", {})
        per_req = lambda k: (p[k] / 100000) if p.get(k) is not None else None
        rows.append([("**%s**" % g["server"]) if g["server"] == SUBJECT else g["server"],
                     g["case"], f_int(g.get("requests", g.get("requests_wrk"))),
                     f_num(g.get("words_per_request"), 2), f_num(per_req("promoted_words"), 2),
                     f_num(per_req("major_words"), 2),
                     f_num(p.get("minor_collections"), 1), f_num(p.get("major_collections"), 2),
                     f_int(g.get("top_heap_words_after"))])
    md.append(table(["server", "case", "requests", "minor words/req", "promoted words/req",
                     "major words/req", "minor GCs /100k req", "major GCs /100k req",
                     "top heap words"], rows))
    for cid in sorted({g["case"] for g in gc}):
        got = {g["server"]: g for g in gc if g["case"] == cid and not g.get("skipped")}
        if not got:
            continue
        hz = got.get(SUBJECT)
        peers = ", ".join("%s %s" % (n, f_num(g.get("words_per_request"), 1))
                          for n, g in got.items() if n != SUBJECT)
        summary_rows.append(["GC: minor words allocated per request (%s)" % cid,
                             f_num(hz.get("words_per_request"), 2) if hz else
                             ("not built" if not doc["servers"].get(SUBJECT, {}).get("available")
                              else "–"),
                             peers or "–", "", ""])


# ----------------------------------------------------------------- parser ---

def merge_instructions(doc, entries, key):
    """Fill "instructions": null from the optional top-level list
    [{"impl", "request" | "case", "instructions"}] (callgrind, run apart)."""
    extra = doc.get("instructions") or []
    for e in entries:
        if e.get("instructions") is None:
            for x in extra:
                if isinstance(x, dict) and x.get("impl") == e["impl"] and x.get(key) == e.get(key):
                    # instructions.sh writes per_parse / per_op
                    v = next((x[k] for k in ("instructions", "per_parse", "per_op")
                              if x.get(k) is not None), None)
                    if v is not None:
                        e["instructions"] = v
                        break


def micro_tables(res, key, label, md, summary_rows, summary_key, summary_label):
    """One table per request (or response case): httpz against the fastest peer.
    Returns (groups, impls) for the charts."""
    groups = sorted({r[key] for r in res},
                    key=lambda q: (REQUEST_ORDER.index(q) if q in REQUEST_ORDER else 99, q))
    impls = []
    for r in res:
        if r["impl"] not in impls:
            impls.append(r["impl"])
    first_seen = list(impls)
    impls.sort(key=lambda i: (i != SUBJECT, first_seen.index(i)))
    for q in groups:
        rs = [r for r in res if r[key] == q]
        size = next((r.get("bytes") for r in rs if r.get("bytes")), None)
        peers = [r for r in rs if r["impl"] != SUBJECT and (r.get("ns_per_op") or {}).get("median")]
        best = min(peers, key=lambda r: r["ns_per_op"]["median"]) if peers else None
        md.append("### %s %s (%s bytes)\n" % (q, label, size if size is not None else "?"))
        rows = []
        for r in sorted(rs, key=lambda r: impls.index(r["impl"])):
            ns = r.get("ns_per_op") or {}
            ratio = ns["median"] / best["ns_per_op"]["median"] if best and ns.get("median") else None
            note = ""
            if best and r is not best and ns and _close_lower(ns, best["ns_per_op"]):
                note = "≈ %s" % best["impl"]
            rows.append(["**%s**" % r["impl"] if r["impl"] == SUBJECT else r["impl"],
                         f_ns(ns.get("median")),
                         "%s–%s" % (f_ns(ns.get("min")), f_ns(ns.get("max"))),
                         "%.0f MB/s" % (size * 1e3 / ns["median"]) if size and ns.get("median") else "–",
                         ("1.00 (fastest peer)" if r is best else
                          "%.2f" % ratio if ratio else "–"),
                         f_num(r.get("words_per_op"), 1) if r.get("words_per_op") is not None else "n/a",
                         f_int(r.get("instructions")) if r.get("instructions") is not None else "n/a",
                         note])
        md.append(table(["impl", "ns/op", "min–max", "throughput", "time vs fastest peer",
                         "words/op", "instructions/op", "notes"], rows))
        hz = next((r for r in rs if r["impl"] == SUBJECT and (r.get("ns_per_op") or {}).get("median")), None)
        if q == summary_key or (q == groups[0] and summary_key not in groups):
            summary_rows.append([
                "%s %s (%s B), ns/op" % (summary_label, q, size),
                "%s (%s words)" % (f_ns(hz["ns_per_op"]["median"]), f_num(hz.get("words_per_op"), 1))
                if hz else "not built",
                "%s %s" % (best["impl"], f_ns(best["ns_per_op"]["median"])) if best else "–",
                ("%.2f× faster" % (best["ns_per_op"]["median"] / hz["ns_per_op"]["median"])
                 + (" ≈" if _close_lower(hz["ns_per_op"], best["ns_per_op"]) else ""))
                if hz and best else "–",
                ""])
    return groups, impls


def parse_section(doc, plot, md, summary_rows):
    res = [r for r in doc.get("results", []) if r.get("impl") and r.get("request")]
    md.append("## Request-head parser (`bench_parse.exe`, %s mode)\n" % doc.get("mode", "?"))
    if not res:
        md.append("parse.json holds no parser results.\n")
    else:
        merge_instructions(doc, res, "request")
        m = doc.get("machine", {})
        md.append(("Pinned to CPU %s. " % m["pinned_cpu"] if m.get("pinned_cpu") is not None else "")
                  + "ns per parsed request head: median and min–max of the runs; ratios against "
                  "the fastest peer (any implementation other than httpz) for the same request. "
                  "Words/op are minor-heap words allocated per parse (n/a: C, off the OCaml "
                  "heap).\n")
        reqs, impls = micro_tables(res, "request", "request", md, summary_rows, "medium",
                                   "Parse request head:")
        c1 = parse_chart(plot, res, "request", reqs, impls, "ns", "parse",
                         "ns per request head (median, min-max)", True)
        c2 = parse_chart(plot, res, "request", reqs, impls, "words", "parse",
                         "minor words allocated per parse", False)
        for c in (c1, c2):
            if c:
                md.append("![parser](%s)\n" % c)
    resp = [r for r in doc.get("response", []) if r.get("impl") and r.get("case")]
    if resp:
        merge_instructions(doc, resp, "case")
        md.append("## Response-head writer (`bench_parse.exe`)\n")
        md.append("ns per response head written: median and min–max of the runs.\n")
        cases, impls = micro_tables(resp, "case", "response head", md, summary_rows, "full_head",
                                    "Write response head:")
        c = parse_chart(plot, resp, "case", cases, impls, "ns", "response",
                        "ns per response head (median, min-max)", True)
        if c:
            md.append("![response writer](%s)\n" % c)


def _close_lower(a, b):
    if not a or not b or a.get("min") is None or b.get("min") is None:
        return False
    if a["min"] <= b["max"] and b["min"] <= a["max"]:
        return True
    hi = max(a["median"], b["median"])
    return hi > 0 and abs(a["median"] - b["median"]) / hi < CLOSE


def parse_chart(plot, res, key, groups, impls, what, prefix, title, log):
    name = "%s_%s" % (prefix, what)
    lines = []
    use = []
    for q in groups:
        vals = []
        for i in impls:
            r = next((x for x in res if x[key] == q and x["impl"] == i), None)
            if what == "ns":
                ns = (r or {}).get("ns_per_op") or {}
                vals.append("%.2f %.2f %.2f" % (ns["median"], ns["min"], ns["max"])
                            if ns.get("median") else "? ? ?")
            else:
                w = (r or {}).get("words_per_op")
                vals.append("%.3f" % w if w is not None else "?")
        lines.append('"%s" %s' % (gp_str(q), " ".join(vals)))
    if what == "words" and all(v == "?" for l in lines for v in l.split()[1:]):
        return None
    for k, i in enumerate(impls):
        if what == "ns":
            use.append("'%s.dat' using %d:%d:%d%s title '%s'" % (
                name, 2 + 3 * k, 3 + 3 * k, 4 + 3 * k, ":xtic(1)" if k == 0 else "", gp_str(i)))
        else:
            use.append("'%s.dat' using %d%s title '%s'" % (
                name, 2 + k, ":xtic(1)" if k == 0 else "", gp_str(i)))
    script = """set title "%s"
set style data histogram
set style histogram %s gap 2
set style fill solid 0.8 border -1
set grid ytics
set key outside right
set yrange [%s:*]
%s
plot %s
""" % (title, "errorbars lw 1" if what == "ns" else "clustered",
       "1" if log else "0", "set logscale y" if log else "", ", ".join(use))
    return plot.draw(name, {name + ".dat": "\n".join(lines) + "\n"}, script)


# ---------------------------------------------------------------- latency ---

def latency_section(doc, plot, md, summary_rows):
    res = doc.get("results", [])
    md.append("## Latency under GC pressure\n")
    if doc.get("_path"):
        import datetime
        when = datetime.datetime.fromtimestamp(os.path.getmtime(doc["_path"]))
        md.append("_From `%s`, written %s (not regenerated by bench/run.sh)._\n"
                  % (os.path.basename(doc["_path"]), when.strftime("%Y-%m-%d %H:%M")))
    if doc.get("description"):
        md.append(doc["description"] + "\n")
    rows = []
    for r in res:
        rows.append([("**%s**" % r["impl"]) if r.get("impl") == SUBJECT else r.get("impl"),
                     f_ns(r.get("p50")), f_ns(r.get("p99")), f_ns(r.get("p99.9")),
                     f_ns(r.get("p99.99")), f_ns(r.get("max"))])
    md.append(table(["impl", "p50", "p99", "p99.9", "p99.99", "max"], rows))
    hz = next((r for r in res if r.get("impl") == SUBJECT), None)
    others = [r for r in res if r.get("impl") != SUBJECT and r.get("p99.9") is not None]
    if hz and others:
        b = min(others, key=lambda r: r["p99.9"])
        summary_rows.append(["Latency p99.9 under GC pressure", f_ns(hz.get("p99.9")),
                             "%s %s" % (b["impl"], f_ns(b["p99.9"])), "", ""])
    # Tail chart: fraction of requests slower than x, from the histograms.
    data, plots = [], []
    for k, r in enumerate(r for r in res if r.get("histogram")):
        h = sorted(r["histogram"])
        total = float(sum(c for _, c in h))
        if total <= 0:
            continue
        above = total
        block = []
        for ns, c in h:
            above -= c
            if above > 0:
                block.append("%g %g" % (ns / 1e3, above / total))
        if not block:
            continue
        data.append("# %s\n%s\n\n" % (r["impl"], "\n".join(block)))
        plots.append("'latency_gc.dat' index %d using 1:2 with steps lw 2 title '%s'" % (
            len(plots), gp_str(r["impl"])))
    if plots:
        script = """set title "Latency tail: fraction of requests slower than x"
set logscale xy
set grid
set xlabel "latency (µs)"
set ylabel "fraction slower"
set key outside right
plot %s
""" % ", ".join(plots)
        c = plot.draw("latency_gc", {"latency_gc.dat": "\n".join(data)}, script)
        if c:
            md.append("![latency under GC pressure](%s)\n" % c)


# ------------------------------------------------------------------- main ---

def machine_lines(docs):
    m = next((d.get("machine") for d in docs if d.get("machine")), None) or {}
    out = []
    for k, label in (("cpu", "CPU"), ("nproc", "cores"), ("uname", "uname -a"),
                     ("commit", "commit"), ("date", "date"), ("ocaml", "OCaml"),
                     ("governor", "cpufreq governor")):
        if m.get(k) is not None:
            out.append("- %s: `%s`" % (label, m[k]))
    if m.get("dirty"):
        out.append("- working tree had uncommitted changes")
    if m.get("loadavg_start") is not None:
        out.append("- load average at start: %.2f%s" % (
            m["loadavg_start"], "" if m.get("loadavg_end") is None else ", at end: %.2f" % m["loadavg_end"]))
    return out


def short_commit(c):
    c = str(c or "?")
    return c[:12] if all(ch in "0123456789abcdef" for ch in c) else c


def classify(path, doc):
    schema = str(doc.get("schema", "")) if isinstance(doc, dict) else ""
    base = os.path.basename(path)
    if schema.startswith("httpz-bench-servers"):
        return "servers"
    if schema.startswith("httpz-bench-parse") or base == "parse.json":
        return "parse"
    if schema.startswith("httpz-bench-latency") or base == "latency.json":
        return "latency"
    return None


def main():
    resdir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results"))
    if not os.path.isdir(resdir):
        sys.exit("no results directory %s: run bench/run.sh first" % resdir)
    plot = Plot(os.path.join(resdir, "charts"))
    found = {"servers": [], "parse": [], "latency": []}
    ignored = []
    for path in sorted(glob.glob(os.path.join(resdir, "*.json"))):
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            ignored.append("%s (unreadable: %s)" % (os.path.basename(path), e))
            continue
        kind = classify(path, doc)
        if kind == "latency":
            doc["_path"] = path
        if kind:
            found[kind].append((path, doc))
        else:
            ignored.append("%s (unknown schema)" % os.path.basename(path))
    docs = [d for v in found.values() for _, d in v]
    md = ["# httpz benchmark report\n",
          "Generated by `bench/report.py` from the JSON in `bench/results/`. "
          "Same machine, same run for every implementation; only ratios measured together "
          "are meaningful.\n"]
    md += machine_lines(docs) + [""]
    summary_rows = []
    for path, doc in found["servers"]:
        server_section(doc, plot, md, summary_rows)
    if not found["servers"]:
        md.append("## Static file serving under load\n\nNo server results (servers.json missing).\n")
    for path, doc in found["parse"]:
        parse_section(doc, plot, md, summary_rows)
    if not found["parse"]:
        md.append("## Request-head parser\n\nNo parse.json: `bench_parse.exe` was not built or not run.\n")
    for path, doc in found["latency"]:
        latency_section(doc, plot, md, summary_rows)
    if plot.note:
        md.append("_%s_\n" % plot.note)
    if ignored:
        md.append("_Ignored: %s_\n" % ", ".join(ignored))
    with open(os.path.join(resdir, "REPORT.md"), "w") as f:
        f.write("\n".join(md).rstrip() + "\n")

    m = next((d.get("machine") for d in docs if d.get("machine")), None) or {}
    modes = sorted({d.get("mode") for d in docs if d.get("mode")})
    sm = ["<!-- generated by bench/report.py; full tables in bench/results/REPORT.md -->",
          "Measured on %s, %s cores, commit `%s`, %s (%s mode). Servers pinned to one core, "
          "load generator on another; ratio = speed of httpz ÷ speed of the best peer "
          "(≈: within run-to-run noise)."
          % (m.get("cpu", "?"), m.get("nproc", "?"), short_commit(m.get("commit")),
             str(m.get("date", "?"))[:10], "/".join(modes) or "?"), ""]
    sm.append(table(["benchmark", "httpz", "best peer", "ratio", "p99 httpz / peer"],
                    summary_rows) if summary_rows else "No results yet.\n")
    with open(os.path.join(resdir, "summary.md"), "w") as f:
        f.write("\n".join(sm))
    print("report: %s" % os.path.join(resdir, "REPORT.md"))
    print("summary for the README: %s" % os.path.join(resdir, "summary.md"))


if __name__ == "__main__":
    main()
