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

latency.json  -- written by _build/default/bench/latency/bench_latency.exe --json,
                 schema "httpz-bench-latency/1" (all latencies in nanoseconds):
  {"schema": "httpz-bench-latency/1", "mode": str, "machine": {...}, "description": str,
   "results": [{"impl": str, "p50", "p99", "p99.9", "p99.99", "max", "mean": ns,
                "samples": int, "histogram": [[upper_ns, count], ...],
                "minor_gcs", "major_cycles", "live_heap_words": int,
                "words_per_iteration", "promoted_words_per_iteration": float,
                "with_churn": {"p50", ..., "max", "mean", "histogram"}}]}
  The top-level percentiles time the parse alone; with_churn times parse +
  the application's cache update. Histogram buckets are [upper bound, count],
  log-spaced, 4 per octave.

Outputs: RESULTS_DIR/REPORT.md, RESULTS_DIR/summary.md (the key tables, the
machine line, the mode, problems) and RESULTS_DIR/charts/. With --readme FILE,
the part of FILE between "<!-- bench:begin -->" and "<!-- bench:end -->" is
replaced by summary.md (bench/run.sh passes README.md).

Usage: report.py [RESULTS_DIR] [--readme README.md]   (default: bench/results next to this script)
"""

import argparse
import glob
import json
import math
import os
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_proto  # noqa: E402  (the HTTP/2 and WebSocket sections)

HERE = os.path.dirname(os.path.abspath(__file__))
SUBJECT = "httpz"
# Two results are "too close to call" when their run ranges [min, max]
# intersect, or when their medians are within this fraction (the floor for
# single-run quick mode, where min = max = median).
CLOSE = 0.03
SERVER_ORDER = ["httpz", "httpz-epoll", "nginx", "lighttpd", "h2o", "cohttp"]


def is_httpz(name):
    """httpz itself or one of its variants (httpz-epoll: the other backend):
    never a peer."""
    return name == SUBJECT or name.startswith(SUBJECT + "-")
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
#
# Each result of a case holds wrk's runs and summary at the top level and,
# for pinned cases, h2load's under "h2load" (the same server instance, right
# after wrk). GEN names a load generator: None for wrk, "h2load" for h2load.

GENS = ((None, "wrk"), ("h2load", "h2load"))


def normalise_servers(doc):
    """Older servers.json ran h2load as a case of its own ("612b_c64_h2load",
    "loadgen": "h2load", fresh server starts, only when wrk saturated). Fold
    such a case into its base case's results, the current shape, so one code
    path renders both."""
    cases = doc.get("cases", [])
    by_id = {c["id"]: c for c in cases}
    keep = []
    for c in cases:
        base = by_id.get(c["id"][:-len("_h2load")]) if (
            c.get("loadgen") == "h2load" and c["id"].endswith("_h2load")) else None
        if base is None:
            keep.append(c)
            continue
        base["h2load"] = {"threads": c.get("threads", 1), "runs_wanted": c.get("runs_wanted"),
                          "duration_s": c.get("duration_s"), "warmup_s": 1,
                          "separate_start": True}
        for r in c.get("results", []):
            t = next((x for x in base["results"] if x["server"] == r["server"]), None)
            if t is not None and r.get("summary"):
                t["h2load"] = {k: r.get(k) for k in ("runs", "summary", "errors", "ok")}
    doc["cases"] = keep
    return doc


def gsum(r, gen):
    """The summary of result r under load generator gen, or None."""
    return (r if gen is None else (r.get(gen) or {})).get("summary")


def grps(r, gen):
    s = gsum(r, gen)
    return s["rps"] if s else None


def server_results(case, gen=None):
    """Results with numbers from gen, in SERVER_ORDER."""
    res = [r for r in case["results"] if gsum(r, gen)]
    return sorted(res, key=lambda r: SERVER_ORDER.index(r["server"])
                  if r["server"] in SERVER_ORDER else 99)


def best_peer(case, gen=None):
    peers = [r for r in server_results(case, gen) if not is_httpz(r["server"])]
    if not peers:
        return None
    return max(peers, key=lambda r: grps(r, gen)["median"])


def threshold(doc):
    return doc.get("config", {}).get("saturation_threshold", 0.9)


def saturated(doc, case, gen):
    """Servers against which gen used >= the threshold of its core in any run."""
    return [r["server"] for r in server_results(case, gen)
            if max([x.get("loadgen_cpu") or 0
                    for x in (r if gen is None else r[gen]).get("runs", [])] or [0])
            >= threshold(doc)]


def has_h2load(case):
    return bool(server_results(case, "h2load"))


def rank_notes(doc, r, ranked):
    """≈ against the neighbours in wrk's req/s ranking, load generator
    saturation, failed requests."""
    notes = []
    if r in ranked:
        rps = r["summary"]["rps"]
        i = ranked.index(r)
        if i > 0 and too_close(rps, ranked[i - 1]["summary"]["rps"]):
            notes.append("≈ %s" % ranked[i - 1]["server"])
        if i + 1 < len(ranked) and too_close(rps, ranked[i + 1]["summary"]["rps"]):
            notes.append("≈ %s" % ranked[i + 1]["server"])
    for gen, label in GENS:
        s = gsum(r, gen)
        lg = med(s.get("loadgen_cpu")) if s else None
        if lg is not None and lg >= threshold(doc):
            notes.append("%s saturated" % label)
        errors = (r if gen is None else r.get(gen) or {}).get("errors")
        if errors:
            notes.append("**%d failed requests (%s)**" % (errors, label))
    return notes


def paired(r, best, gen, metric=lambda run: run["rps"]):
    """Per-round ratios of r to best under load generator gen: the servers
    of a case run interleaved (bench_servers.py, bench_case), so the runs of
    one round met the same state of the machine and their ratio cancels
    most of its drift. None unless both have runs from at least 2 common
    rounds (files from before interleaving have no rounds)."""
    if not best or r is best:
        return None
    a, b = (r, best) if gen is None else (r.get(gen) or {}, best.get(gen) or {})
    mine = {x["round"]: x for x in a.get("runs", []) if x.get("round")}
    theirs = {x["round"]: x for x in b.get("runs", []) if x.get("round")}
    ratios = []
    for k in sorted(set(mine) & set(theirs)):
        a, b = metric(mine[k]), metric(theirs[k])
        if a is not None and b:
            ratios.append(a / b)
    if len(ratios) < 2:
        return None
    return {"median": statistics.median(ratios), "min": min(ratios), "max": max(ratios),
            "n": len(ratios)}


def paired_close(p):
    """A paired ratio too close to call: the rounds disagree on the sign,
    or the median is within CLOSE of 1."""
    return p["min"] <= 1 <= p["max"] or abs(p["median"] - 1) < CLOSE


def vs_best(r, best, gen, fmt=f_ratio, best_label="1.00× (best peer)"):
    """httpz-style ratio cell: r's median ÷ the best peer's, ≈ when too
    close; the median of the per-round ratios when the runs were paired."""
    a, b = grps(r, gen), grps(best, gen) if best else None
    if not a or not b:
        return "–"
    if r is best:
        return best_label
    p = paired(r, best, gen)
    if p:
        return fmt(p["median"]) + (" ≈" if paired_close(p) else "")
    return fmt(a["median"] / b["median"]) + (" ≈" if too_close(a, b) else "")


def gen_verdict(doc, case, gen):
    """httpz against the best peer under one generator: {"status": "ahead" |
    "≈" | "behind", "ratio", "best", "bound"}, or None without both numbers.
    "bound": the generator saturated against httpz or the best peer."""
    hz = next((r for r in server_results(case, gen) if r["server"] == SUBJECT), None)
    best = best_peer(case, gen)
    if not hz or not best:
        return None
    a, b = grps(hz, gen), grps(best, gen)
    p = paired(hz, best, gen)
    if p:
        ratio, close = p["median"], paired_close(p)
    else:
        ratio, close = a["median"] / b["median"], too_close(a, b)
    status = "≈" if close else ("ahead" if ratio > 1 else "behind")
    sat = saturated(doc, case, gen)
    out = {"gen": dict(GENS)[gen], "status": status, "ratio": ratio, "best": best["server"],
           "bound": SUBJECT in sat or best["server"] in sat, "paired": bool(p)}
    if gen is None:
        # Tail latency against the same peer: per-round p99 ratios (lower is
        # better, so "ahead" means httpz's p99 is the lower one).
        lp = paired(hz, best, gen, lambda run: run["latency_us"].get("p99"))
        la, lb = hz["summary"]["latency_us"].get("p99"), best["summary"]["latency_us"].get("p99")
        if lp:
            out["p99"] = {"ratio": lp["median"], "status": "≈" if paired_close(lp)
                          else ("ahead" if lp["median"] < 1 else "behind")}
        elif la and lb and lb["median"]:
            out["p99"] = {"ratio": la["median"] / lb["median"], "status": "≈" if too_close(la, lb)
                          else ("ahead" if la["median"] < lb["median"] else "behind")}
    return out


def case_verdict(doc, case):
    """(word, [per-generator verdicts]). httpz wins a case only if it is ahead
    of the best peer under both generators; it is ≈ if too close to call under
    either; "behind" if behind under both; otherwise the generators disagree."""
    vs = [v for v in (gen_verdict(doc, case, g) for g, _ in GENS) if v]
    if not vs:
        return None, vs
    sts = {v["status"] for v in vs}
    if "≈" in sts:
        word = "≈ best peer"
    elif sts == {"ahead"}:
        word = "httpz ahead"
    elif sts == {"behind"}:
        word = "httpz behind"
    else:
        word = "wrk and h2load disagree"
    if len(vs) == 1:
        word += " (%s only)" % vs[0]["gen"]
    return word, vs


def verdict_detail(vs):
    return "; ".join("%s %s %s%s%s" % (
        v["gen"], f_ratio(v["ratio"]), v["best"], " ≈" if v["status"] == "≈" else "",
        " (%s saturated)" % v["gen"] if v["bound"] else "") for v in vs)


def h2load_opinion(doc, case):
    """One sentence: what h2load showed for httpz against its best peer."""
    hz = next((r for r in server_results(case, "h2load") if r["server"] == SUBJECT), None)
    best = best_peer(case, "h2load")
    parts = []
    if hz and best:
        parts.append("h2load on the same server instances: httpz %s req/s, %s the best peer "
                     "(%s, %s req/s)%s" % (
                         f_int(grps(hz, "h2load")["median"]),
                         f_ratio(grps(hz, "h2load")["median"] / grps(best, "h2load")["median"]),
                         best["server"], f_int(grps(best, "h2load")["median"]),
                         ", too close to call" if too_close(grps(hz, "h2load"), grps(best, "h2load"))
                         else ""))
    elif has_h2load(case):
        parts.append("h2load on the same server instances: %s" % ", ".join(
            "%s %s req/s" % (r["server"], f_int(grps(r, "h2load")["median"]))
            for r in server_results(case, "h2load")))
    else:
        return ("No second load generator in this case%s." %
                (" (server not pinned)" if not case.get("server_pinned", True) else ""))
    sat = saturated(doc, case, "h2load")
    if sat:
        parts.append("h2load itself used ≥ %d%% of its core against %s, so %s bounded too" % (
            100 * threshold(doc), ", ".join(sat),
            "those numbers are" if len(sat) < len(server_results(case, "h2load")) else "all are"))
    else:
        parts.append("h2load stayed below %d%% of its core, so its numbers are the servers' "
                     "own limit" % (100 * threshold(doc)))
    return "; ".join(parts) + "."


def unavailable(doc, name):
    """Why a server has no numbers ("not built", "not installed", ...), or None."""
    s = doc.get("servers", {}).get(name, {})
    return None if s.get("available", True) else str(s.get("reason", "not available")).split(" (")[0]


def h2load_setup(doc, case=None):
    h = (case or {}).get("h2load") or {}
    cfg = doc.get("config", {})
    d = h.get("duration_s", cfg.get("h2load_duration_s"))
    w = h.get("warmup_s", cfg.get("h2load_warmup_s"))
    if h.get("separate_start"):
        return "`h2load --h1 -t1`, %s s after a %s s warm-up, on a fresh server start" % (d, w)
    n = h.get("runs_wanted") or cfg.get("h2load_runs") or 1
    if n > 1:
        return ("`h2load --h1 -t1`, %d interleaved rounds of one %s s run per server after a "
                "%s s warm-up each, on the same server instances after the wrk rounds"
                % (n, d, cfg.get("h2load_warmup_s", w)))
    return ("`h2load --h1 -t1`, one run of %s s after a %s s warm-up, on the same server "
            "instance right after wrk" % (d, cfg.get("h2load_warmup_s", w)))


def server_section(doc, plot, md, summ):
    normalise_servers(doc)
    cfg = doc.get("config", {})
    md.append("## Static file serving under load (`%s` mode)\n" % doc.get("mode", "?"))
    h2case = next((c for c in doc.get("cases", []) if has_h2load(c)), None)
    md.append("Server pinned to CPU %s, load generator (`%s`, 1 thread) pinned to CPU %s; "
              "%s run(s) of %s s per server and case after a %s s warm-up; medians shown with "
              "the min–max of the runs. %s"
              "Ratios are against the best peer (the fastest server "
              "other than httpz) of the same case and load generator. **≈** marks results too "
              "close to call: their run ranges overlap or their medians differ by less than %d%%. "
              "%s"
              "A case is a win for httpz only if it is ahead of the best peer under both load "
              "generators, and ≈ if too close to call under either. "
              "Latency is measured by a closed-loop generator (wrk), so it is the latency *at "
              "the throughput reached*, not at a fixed rate. CPU columns are shares of one core "
              "(the server's: its whole process tree).\n"
              % (cfg.get("server_cpu"), cfg.get("wrk", "wrk"), cfg.get("client_cpu"),
                 cfg.get("runs"), cfg.get("duration_s"), cfg.get("warmup_s"),
                 ("Second load generator: %s (%s), in the cases whose tables have h2load "
                  "columns%s; its CPU shares cover the whole h2load process, warm-up "
                  "included. " % (h2load_setup(doc, h2case), cfg.get("h2load") or "h2load",
                                  "" if h2case["h2load"].get("separate_start")
                                  else " (every case with a pinned server)")) if h2case else "",
                 100 * CLOSE,
                 "The servers of a case run interleaved (all started, then one wrk run against "
                 "each per round, the order rotating), so a slow spell of the shared machine hits "
                 "them alike; wrk ratios are then the median of the per-round ratios, ≈ when the "
                 "rounds disagree on which server is ahead or that median is within %d%% of 1. "
                 % (100 * CLOSE) if any(c.get("interleaved") for c in doc.get("cases", [])) else ""))
    for name, s in doc.get("servers", {}).items():
        if not s.get("available"):
            md.append("- **%s: %s** — no numbers for it in this report.\n" % (name, s.get("reason")))
    md.append("")
    chart_pos = len(md)
    ratio_rows = []
    for case in doc.get("cases", []):
        if case.get("compression") or case.get("app"):
            continue  # compression_section, app_section
        md.append("### %s — %s\n" % (case["id"], case["description"]))
        extra = []
        if case.get("headers"):
            extra.append("request headers: `%s`" % "`, `".join(case["headers"]))
        h2 = has_h2load(case)
        extra.append("%d connection(s), load generator %s%s" % (
            case["connections"], case["loadgen"], " and h2load" if h2 else ""))
        if not case.get("server_pinned", True):
            extra.append("server not pinned (may share the load generator's core)")
        if (case.get("h2load") or {}).get("mode") == "requests":
            extra.append("h2load in request-count mode: `-n` = wrk's median req/s on the same "
                         "instance × %s s, no warm-up (every request opens a connection; h2load "
                         "1.52's timed mode never exits when the server closes them)"
                         % case["h2load"].get("duration_s"))
        md.append("_" + "; ".join(extra) + "_\n")
        best = best_peer(case)
        hbest = best_peer(case, "h2load")
        results = [r for r in case["results"] if gsum(r, None) or gsum(r, "h2load")]
        results.sort(key=lambda r: SERVER_ORDER.index(r["server"]) if r["server"] in SERVER_ORDER else 99)
        ranked = sorted(server_results(case), key=lambda r: -r["summary"]["rps"]["median"])
        rows = []
        for r in results:
            s = r.get("summary") or {}
            rps = s.get("rps") or {}
            hs = gsum(r, "h2load") or {}
            lat = s.get("latency_us", {})
            bpr = [x.get("bytes_per_response") for x in r.get("runs", []) if x.get("bytes_per_response")]
            row = ["**%s**" % r["server"] if r["server"] == SUBJECT else r["server"],
                   f_int(rps.get("median")),
                   "%s–%s" % (f_int(rps["min"]), f_int(rps["max"])) if rps else "–",
                   vs_best(r, best, None)]
            if h2:
                row += [f_int(med(hs.get("rps"))), vs_best(r, hbest, "h2load")]
            row += [f_us(med(lat.get("p50"))), f_us(med(lat.get("p90"))), f_us(med(lat.get("p99"))),
                    f_us(med(lat.get("p99.9"))), f_pct(med(s.get("loadgen_cpu")))]
            if h2:
                row.append(f_pct(med(hs.get("loadgen_cpu"))))
            row.append(f_pct(med(s.get("server_cpu"))))
            if h2:
                row.append(f_pct(med(hs.get("server_cpu"))))
            row += [f_int(bpr[0]) if bpr else "–", "; ".join(rank_notes(doc, r, ranked))]
            rows.append(row)
        for gen, label in GENS:
            b = best_peer(case, gen)
            if not b:
                continue
            bm = grps(b, gen)["median"]
            for r in server_results(case, gen):
                x = grps(r, gen)
                ratio_rows.append((case["id"] + ("" if gen is None else " " + label), r["server"],
                                   x["median"] / bm, x["min"] / bm, x["max"] / bm))
        if rows:
            if h2:
                header = ["server", "req/s", "min–max", "vs best peer", "req/s (h2load)",
                          "vs best peer (h2load)", "p50", "p90", "p99", "p99.9", "wrk CPU",
                          "h2load CPU", "server CPU (wrk)", "server CPU (h2load)", "bytes/resp",
                          "notes"]
            else:
                header = ["server", "req/s", "min–max", "vs best peer", "p50", "p90", "p99",
                          "p99.9", "wrk CPU", "server CPU", "bytes/resp", "notes"]
            md.append(table(header, rows))
        for r in case["results"]:
            if not gsum(r, None) and doc.get("servers", {}).get(r["server"], {}).get("available", True):
                md.append("- %s: %s\n" % (r["server"], r.get("skipped", "no successful wrk run")))
        wsat = saturated(doc, case, None)
        if wsat:
            md.append("wrk used ≥ %d%% of its core against %s: wrk's req/s there are bounded by "
                      "the load generator. %s\n"
                      % (100 * threshold(doc), ", ".join(wsat), h2load_opinion(doc, case)))
        elif h2:
            md.append("wrk stayed below %d%% of its core. %s\n"
                      % (100 * threshold(doc), h2load_opinion(doc, case)))
        word, vs = case_verdict(doc, case)
        if word:
            md.append("**Verdict: %s** (%s).\n" % (word, verdict_detail(vs)))
        chart = latency_chart(plot, case)
        if chart:
            md.append("![latency %s](%s)\n" % (case["id"], chart))
    chart = rps_chart(plot, ratio_rows)
    if chart:
        md.insert(chart_pos,
                  "Throughput relative to the best peer of each case and load generator (1.0 = "
                  "best peer; bars show min–max of the runs):\n\n![throughput](%s)\n" % chart)
    gc_section(doc, md, summ)
    server_summary(doc, summ)
    compression_section(doc, md, summ)
    app_section(doc, md, summ)
    if doc.get("problems"):
        md.append("### Problems during the run\n")
        for p in doc["problems"]:
            md.append("- `%s`" % p.splitlines()[0])
        md.append("")


COMPRESSION_LABELS = {
    "httpz": "httpz, no compression",
    "httpz-gzip": "httpz `--compress` (gzip made once per file version, then from the cache)",
    "nginx-gzip": "nginx `gzip on; gzip_comp_level 6` (compresses every response)",
}


def reference_rows(case, ref):
    """(result, ratio text, server CPU µs per request) for every wrk result of
    a case that compares against one reference server, not a best peer: the
    ratio is the median of the per-round ratios to ref."""
    res = [r for r in case["results"] if gsum(r, None)]
    base = next((r for r in res if r["server"] == ref), None)
    out = []
    for r in res:
        runs = [x for x in r.get("runs", []) if x.get("rps")]
        cpu = med(summarise_list([x["server_cpu"] * 1e6 / x["rps"] for x in runs
                                  if x.get("server_cpu") and x.get("rps")]))
        pr = paired(r, base, None) if base else None
        ratio = ("1.00 (reference)" if r is base else f_ratio(med(pr)) if pr else
                 f_ratio(r["summary"]["rps"]["median"] / base["summary"]["rps"]["median"]) if base
                 else "–")
        out.append((r, ratio, cpu))
    return out


def compression_section(doc, md, summ):
    """What on-the-fly compression costs: each compression case's servers,
    req/s, bytes per response and server CPU per request, paired per round
    against httpz without compression."""
    out = []
    for case in doc.get("cases", []):
        if not case.get("compression"):
            continue
        rows = []
        for r, ratio, cpu in reference_rows(case, SUBJECT):
            s = r["summary"]
            runs = [x for x in r.get("runs", []) if x.get("rps")]
            bpr = med(summarise_list([x.get("bytes_per_response") for x in runs]))
            rows.append([COMPRESSION_LABELS.get(r["server"], r["server"]), f_int(s["rps"]["median"]),
                         ratio, f_int(bpr) if bpr else "–", "%.1f" % cpu if cpu else "–",
                         f_us(med(s["latency_us"].get("p99")))])
        if not rows:
            continue
        n = case.get("runs_wanted") or 1
        out.append("### On-the-fly compression: %s\n" % case["description"])
        out.append("Server pinned to one core, `wrk` (1 thread) on the other, every request with "
                   "`Accept-Encoding: gzip`; %s of %s s after a 1 s warm-up, the servers "
                   "interleaved (ratio: median of the per-round ratios to httpz without "
                   "compression). Bytes per response include the head. Server CPU per request is "
                   "the server's CPU time ÷ requests, so it holds even where wrk is the "
                   "bottleneck.\n" % ("%d rounds" % n if n > 1 else "one run", case.get("duration_s", "?")))
        out.append(table(["server", "req/s", "vs httpz without compression", "bytes / response",
                          "server CPU µs / request", "p99"], rows))
        out.append("")
    if out:
        md += out
        summ["compression"] = out


APP_LABELS = {
    "httpz-todos": "httpz, `Route` + `Respond.json`",
    "httpz-todos-hand": "httpz, the same handler behind a hand-written match (no router)",
    "cohttp-todos": "cohttp-lwt-unix, a match on the split path + `respond_string`",
}


def app_section(doc, md, summ):
    """A routed JSON endpoint served by small programs (todos_c64): req/s,
    server CPU per request and p99, paired per round against httpz with its
    router; the hand-written match shows what the router costs."""
    out = []
    for case in doc.get("cases", []):
        if not case.get("app"):
            continue
        rows = []
        for r, ratio, cpu in reference_rows(case, "httpz-todos"):
            s = r["summary"]
            rows.append([APP_LABELS.get(r["server"], r["server"]), f_int(s["rps"]["median"]),
                         ratio, "%.1f" % cpu if cpu else "–", f_us(med(s["latency_us"].get("p99")))])
        if not rows:
            continue
        n = case.get("runs_wanted") or 1
        out.append("### A routed JSON endpoint: %s\n" % case["description"])
        out.append("`GET %s` answered by a small program on one worker (`bench/server/todos_httpz.ml`, "
                   "`bench/server/cohttp_todos.ml`), the same ready-made JSON body from the same "
                   "table in each. Server pinned to one core, `wrk` (1 thread) on the other; %s of "
                   "%s s after a 1 s warm-up, the servers interleaved (ratio: median of the "
                   "per-round ratios to httpz with its router). Server CPU per request is the "
                   "server's CPU time ÷ requests, so it holds even where wrk is the bottleneck.\n"
                   % ("/" + case.get("file", "todos/42"),
                      "%d rounds" % n if n > 1 else "one run", case.get("duration_s", "?")))
        out.append(table(["server", "req/s", "vs httpz with Route", "server CPU µs / request",
                          "p99"], rows))
        out.append("")
    if out:
        md += out
        summ["app"] = out


def summarise_list(xs):
    xs = sorted(x for x in xs if x is not None)
    return {"median": xs[len(xs) // 2]} if xs else None


def rps_chart(plot, ratio_rows):
    """ratio_rows: [(group label, server, ratio, min, max)], one group per
    case and load generator, in order."""
    if not ratio_rows:
        return None
    servers = [s for s in SERVER_ORDER if any(r[1] == s for r in ratio_rows)]
    groups = []
    for r in ratio_rows:
        if r[0] not in groups:
            groups.append(r[0])
    lines = ["# case " + " ".join("%s %s_min %s_max" % (s, s, s) for s in servers)]
    for g in groups:
        vals = []
        for s in servers:
            r = next((x for x in ratio_rows if x[0] == g and x[1] == s), None)
            vals += ["%.4f %.4f %.4f" % (r[2], r[3], r[4]) if r else "? ? ?"]
        lines.append('"%s" %s' % (gp_str(g), " ".join(vals)))
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
set xtics rotate by -30
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


def gc_section(doc, md, summ):
    gc = doc.get("gc", [])
    if not gc:
        return
    md.append("### GC behaviour under load\n")
    md.append("Servers that report OCaml GC statistics over HTTP (httpz `--stats-token T` at "
              "`/__httpz/stats`, the cohttp peer at `/__stats`), read after the warm-up and "
              "after the wrk runs of the same server instance as the tables above (\"measured "
              "over\"; a server the case does not otherwise run gets one wrk run of its own), "
              "divided by the requests the server counted (wrk's own count misses "
              "the up to one-per-connection requests in flight when it stops). httpz's "
              "`--stats-token T` only adds a comparison of each request target with the stats path. "
              "Major words include buffers allocated directly in the major heap (over 256 "
              "words); – where the server does not report a counter.\n")
    rows = []
    for g in gc:
        if g.get("skipped"):
            rows.append([g["server"], g["case"], g["skipped"].split(" (")[0]] + [""] * 9)
            continue
        p = g.get("per_100k_requests", {})
        per_req = lambda k: (p[k] / 100000) if p.get(k) is not None else None
        rows.append([("**%s**" % g["server"]) if g["server"] == SUBJECT else g["server"],
                     g["case"], f_int(g.get("requests", g.get("requests_wrk"))),
                     f_num(g.get("words_per_request"), 2), f_int(p.get("minor_words")),
                     f_num(per_req("promoted_words"), 2), f_num(per_req("major_words"), 2),
                     f_num(p.get("minor_collections"), 1), f_num(p.get("major_collections"), 2),
                     f_int(g.get("top_heap_words_after") or g.get("heap_words_after")),
                     g.get("window", "one wrk run"),
                     "**%d failed requests**" % g["errors"] if g.get("errors") else ""])
    md.append(table(["server", "case", "requests", "minor words/req", "minor words /100k req",
                     "promoted words/req", "major words/req", "minor GCs /100k req",
                     "major GCs /100k req", "heap words after", "measured over", "notes"], rows))
    # README: the headline case only.
    cid = "612b_c64" if any(g["case"] == "612b_c64" for g in gc) else gc[0]["case"]
    srows = []
    for g in sorted((g for g in gc if g["case"] == cid), key=lambda g: g["server"] != SUBJECT):
        name = ("**%s**" % g["server"]) if g["server"] == SUBJECT else g["server"]
        if g.get("skipped"):
            srows.append([name, g["skipped"].split(" (")[0], "", "", ""])
            continue
        p = g.get("per_100k_requests", {})
        srows.append([name, f_num(g.get("words_per_request"), 2), f_int(p.get("minor_words")),
                      f_num(p.get("minor_collections"), 1), f_num(p.get("major_collections"), 2)])
    windows = sorted({g.get("window", "one wrk run") for g in gc
                      if g["case"] == cid and not g.get("skipped")})
    summ["gc"] = ["GC while serving (%s, over %s, the server's own `Gc` counters):\n"
                  % (cid, " / ".join(windows) or "one wrk run"),
                  table(["server", "minor words / request", "minor words / 100k req",
                         "minor GCs / 100k req", "major GCs / 100k req"], srows)]


def server_summary(doc, summ):
    """README block: the headline case (612 B, 64 keep-alive connections),
    every server, ratios against the best peer under wrk and h2load; then one
    line per case with httpz against its best peer under both generators and
    the verdict."""
    cases = {c["id"]: c for c in doc.get("cases", [])}
    head = cases.get("612b_c64")
    cfg = doc.get("config", {})
    runs = cfg.get("runs") or 1
    out = []
    if head:
        ranked = sorted(server_results(head), key=lambda r: -r["summary"]["rps"]["median"])
        best, hbest = best_peer(head), best_peer(head, "h2load")
        h2 = has_h2load(head)
        out.append("### Serving a 612 B file, 64 keep-alive connections\n")
        out.append("Server pinned to one core, `wrk` (1 thread) on the other; %s of %s s "
                   "after a %s s warm-up%s.%s Ratio = req/s ÷ the best peer's (the "
                   "fastest server other than httpz) under the same load generator. p99 is "
                   "wrk's latency at the throughput reached (closed loop).\n"
                   % ("%d runs" % runs if runs > 1 else "one run", cfg.get("duration_s", "?"),
                      cfg.get("warmup_s", "?"), ", median and min–max of the runs" if runs > 1 else "",
                      (" Then %s." % h2load_setup(doc, head)) if h2 else ""))
        rows = []
        for r in ranked:
            s = r["summary"]
            notes = rank_notes(doc, r, ranked)
            if best and r is not best and r["server"] == SUBJECT:
                if too_close(s["rps"], best["summary"]["rps"]) and "≈ %s" % best["server"] not in notes:
                    notes.append("≈ %s" % best["server"])
                p99, bp99 = s["latency_us"].get("p99"), best["summary"]["latency_us"].get("p99")
                if p99 and bp99 and too_close(p99, bp99):
                    notes.append("p99 ≈ %s" % best["server"])
            row = ["**%s**" % r["server"] if r["server"] == SUBJECT else r["server"],
                   f_int(s["rps"]["median"])]
            if runs > 1:
                row.append("%s–%s" % (f_int(s["rps"]["min"]), f_int(s["rps"]["max"])))
            row += [vs_best(r, best, None, lambda x: "%.2f" % x, "1.00 (best peer)"),
                    f_us(med(s["latency_us"].get("p99")))]
            if h2:
                row += [f_int(med(grps(r, "h2load"))),
                        vs_best(r, hbest, "h2load", lambda x: "%.2f" % x, "1.00 (best peer)")]
            row.append("; ".join(notes))
            rows.append(row)
        header = ["server", "req/s"] + (["min–max"] if runs > 1 else []) + ["vs best peer", "p99"]
        if h2:
            header += ["req/s (h2load)", "vs best peer (h2load)"]
        out.append(table(header + ["notes"], rows))
        for r in head["results"]:
            if not r.get("summary"):
                out.append("- %s: %s — no numbers." % (
                    r["server"], unavailable(doc, r["server"]) or r.get("skipped", "no successful run")))
        wsat = saturated(doc, head, None)
        if wsat:
            out.append("\nwrk used ≥ %d%% of its core against %s, so those req/s are bounded by "
                       "the load generator. %s\n" % (
                           100 * threshold(doc), ", ".join(wsat), h2load_opinion(doc, head)))
    # Every case in one table: httpz against its best peer under each
    # generator, and the verdict that needs both.
    rows = []
    for c in doc.get("cases", []):
        if c.get("compression") or c.get("app"):
            continue  # not file-server peers: compression_section, app_section
        word, vs = case_verdict(doc, c)
        if not word:
            continue
        by = {v["gen"]: v for v in vs}
        row = ["%s%s" % (c["id"], "" if c.get("server_pinned", True) else " (server not pinned)")]
        for gen, label in GENS:
            v = by.get(label)
            hz = next((r for r in server_results(c, gen) if r["server"] == SUBJECT), None)
            row += [f_int(grps(hz, gen)["median"]) if hz else "–",
                    ("%s %s%s" % (f_ratio(v["ratio"]), v["best"], " ≈" if v["status"] == "≈" else ""))
                    if v else "–"]
        w = by.get("wrk") or {}
        lp = w.get("p99")
        row.append("%s%s" % (f_ratio(lp["ratio"]), " ≈" if lp["status"] == "≈" else "") if lp else "–")
        row.append(", ".join(v["gen"] for v in vs if v["bound"]) or "–")
        row.append("**%s**" % word)
        rows.append(row)
    if rows:
        out.append("### Every case: httpz against the best peer\n")
        interleaved = any(c.get("interleaved") for c in cases.values())
        out.append("Per case, httpz's req/s and its ratio to the fastest other server under each "
                   "load generator (wrk: %s; h2load: %s). %s"
                   "httpz wins a case only if it "
                   "is ahead under both, ≈ if too close to call under either. p99 is httpz's wrk "
                   "p99 latency ÷ that peer's (below 1: httpz's tail is shorter). \"saturated\" "
                   "names the generator that used ≥ %d%% of its core against httpz or that "
                   "peer: its ratio is bounded by the client, not the servers.\n"
                   % ("median of %d runs" % runs if runs > 1 else "one run",
                      ("median of %d runs on the same server instances" % cfg.get("h2load_runs")
                       if (cfg.get("h2load_runs") or 1) > 1 else "one run on the same server instance")
                      if any(has_h2load(c) for c in cases.values())
                      else "not run",
                      ("The servers of a case ran interleaved, one run each per round, so ratios "
                       "are the median of the per-round ratios, and ≈ means the rounds "
                       "disagree on which is ahead or the median is within %d%% of 1. "
                       % (100 * CLOSE)) if interleaved and runs > 1 else "",
                      100 * threshold(doc)))
        out.append(table(["case", "httpz req/s (wrk)", "vs best peer (wrk)", "httpz req/s (h2load)",
                          "vs best peer (h2load)", "p99 vs that peer (wrk)", "saturated", "verdict"],
                         rows))
    w2 = cases.get("612b_c64_w2")
    if w2 and any(r["server"] == SUBJECT for r in server_results(w2)):
        out.append("\n612b_c64_w2: 2 server workers, not pinned, so they share the cores with wrk; "
                   "it shows that the multi-worker path works, not a clean throughput comparison.\n")
    if not head:
        out.append("### Serving static files\n\nThe 612 B / 64-connection case was not run.\n")
    out += backend_table(doc)
    summ["server"] = out


def backend_table(doc):
    """httpz on io_uring (its default) against httpz on epoll and the best
    peer, per case: req/s (wrk), server CPU per request and its kernel
    share, and system calls per request where they were counted."""
    sysc = {(e["case"], e["server"]): e for e in doc.get("syscalls") or []}
    rows = []
    for c in doc.get("cases", []):
        res = {r["server"]: r for r in server_results(c)}
        hz, ep = res.get(SUBJECT), res.get(SUBJECT + "-epoll")
        if not (hz and ep):
            continue
        best = best_peer(c)
        row = [c["id"]]
        for r in (hz, ep, best):
            if not r:
                row += ["–", "–", "–"]
                continue
            runs = r.get("runs") or []
            us = [x.get("server_us_per_request") for x in runs if x.get("server_us_per_request")]
            ks = [x.get("server_kernel_share") for x in runs if x.get("server_kernel_share") is not None]
            sc = sysc.get((c["id"], r["server"]))
            row += [f_int(r["summary"]["rps"]["median"]),
                    "%.2f µs (%d%% kernel)" % (statistics.median(us), round(100 * statistics.median(ks)))
                    if us and ks else "–",
                    "%.2f" % sc["per_request"] if sc and sc.get("per_request") else "–"]
        p = paired(hz, ep, None)
        row.insert(4, ("%s%s" % (f_ratio(p["median"]), " ≈" if paired_close(p) else "")) if p else "–")
        if best:
            row[8] = "%s: %s" % (best["server"], row[8])
        rows.append(row)
    if not rows:
        return []
    return ["### Backends: io_uring (the default) and epoll\n",
            "httpz on io_uring and on epoll, measured in the same rounds as the peers, and the "
            "case's best peer. CPU: the server's CPU time per request, and the share of it spent "
            "in the kernel (utime/stime over the wrk runs). System calls per request: counted by "
            "`strace -c` attached to the server during one more wrk run (counts, not speeds: "
            "strace slows every server down).\n",
            table(["case", "io_uring req/s", "io_uring CPU/request", "io_uring syscalls/request",
                   "io_uring ÷ epoll", "epoll req/s", "epoll CPU/request", "epoll syscalls/request",
                   "best peer req/s", "its CPU/request", "its syscalls/request"], rows)]


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


def micro_tables(res, key, label, md):
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
    return groups, impls


def parse_section(doc, plot, md, summ):
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
        reqs, impls = micro_tables(res, "request", "request", md)
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
        cases, impls = micro_tables(resp, "case", "response head", md)
        c = parse_chart(plot, resp, "case", cases, impls, "ns", "response",
                        "ns per response head (median, min-max)", True)
        if c:
            md.append("![response writer](%s)\n" % c)
    parser_summary(doc, res, resp, summ)


def speedup(hz, peer):
    """"N× faster" / "N× slower" for httpz against one peer, ≈ when too close."""
    a, b = (hz or {}).get("ns_per_op") or {}, (peer or {}).get("ns_per_op") or {}
    if not a.get("median") or not b.get("median"):
        return "–"
    x = b["median"] / a["median"]
    txt = "%.2f× faster" % x if x >= 1 else "%.2f× slower" % (1 / x)
    return txt + (" ≈" if _close_lower(a, b) else "")


def parser_summary(doc, res, resp, summ):
    """README block: per request, httpz against every peer (ns/op, words/op,
    speed ratio), then the response-head writer's headline case."""
    impls = []
    for r in res + resp:
        if r["impl"] not in impls and r["impl"] != SUBJECT:
            impls.append(r["impl"])
    has_instr = any(r.get("instructions") is not None for r in res + resp)
    groups = sorted({r["request"] for r in res},
                    key=lambda q: (REQUEST_ORDER.index(q) if q in REQUEST_ORDER else 99, q))
    rows = []

    def row(label, rs):
        by = {r["impl"]: r for r in rs}
        hz = by.get(SUBJECT)
        cells = [label]
        for i in [SUBJECT] + impls:
            r = by.get(i)
            ns = (r or {}).get("ns_per_op") or {}
            w = (r or {}).get("words_per_op")
            cells.append("–" if not ns.get("median") else
                         "%s · %s w" % (f_ns(ns["median"]), f_num(w, 0)) if w is not None else
                         f_ns(ns["median"]))
        cells += [speedup(hz, by.get(i)) if by.get(i) else "–" for i in impls]
        if has_instr:
            cells.append(" / ".join(f_int(by[i].get("instructions")) if by.get(i) else "–"
                                    for i in [SUBJECT] + impls))
        rows.append(cells)

    for q in groups:
        rs = [r for r in res if r["request"] == q]
        size = next((r.get("bytes") for r in rs if r.get("bytes")), None)
        row("parse %s (%s B)" % (q, size if size is not None else "?"), rs)
    rcases = [c for c in ("full_head",) if any(r["case"] == c for r in resp)]
    for c in rcases:
        rs = [r for r in resp if r["case"] == c]
        size = next((r.get("bytes") for r in rs if r.get("bytes")), None)
        row("write response head (%s B)" % (size if size is not None else "?"), rs)
    header = ["operation", "httpz"] + impls + ["httpz vs %s" % i for i in impls]
    if has_instr:
        header.append("instructions/op (%s)" % " / ".join([SUBJECT] + impls))
    m = doc.get("machine", {})
    runs = (doc.get("config") or {}).get("runs")
    summ["parser"] = [
        "### Request-head parser and response writer\n",
        "ns per operation (median of %s runs%s) · minor words allocated per operation "
        "(C's http_parser allocates off the OCaml heap: no word count). \"faster\" = "
        "peer's time ÷ httpz's time.\n"
        % (runs if runs is not None else "the", ", pinned to CPU %s" % m["pinned_cpu"]
           if m.get("pinned_cpu") is not None else ""),
        table(header, rows)]
    summ["parser"] += pico_summary(doc, res)


# Issue 15's target: httpz's parse time within 2x of picohttpparser built
# with SSE4.2 (the fastest widely used C parser), on every request.
PICO_SSE42, PICO_DEBIAN, PICO_TARGET = "picohttpparser_sse42", "picohttpparser", 2.0


def pico_summary(doc, res):
    """Per request: httpz's median time ÷ each picohttpparser build's (the
    medians come from the same interleaved run), and instructions per parse.
    Says so when the SSE4.2 build could not be made (bench/parse/pico_sse42.sh)."""
    if not any(r["impl"] == PICO_DEBIAN for r in res) and not any(r["impl"] == PICO_SSE42 for r in res):
        return []
    groups = sorted({r["request"] for r in res},
                    key=lambda q: (REQUEST_ORDER.index(q) if q in REQUEST_ORDER else 99, q))
    rows = []
    for q in groups:
        by = {r["impl"]: r for r in res if r["request"] == q}
        hz = by.get(SUBJECT)
        hz_ns = med((hz or {}).get("ns_per_op"))
        cells = ["parse %s" % q]
        for impl in (PICO_SSE42, PICO_DEBIAN):
            p = by.get(impl)
            p_ns = med((p or {}).get("ns_per_op"))
            ratio = hz_ns / p_ns if hz_ns and p_ns else None
            mark = ""
            if impl == PICO_SSE42 and ratio is not None:
                mark = " (within %g×)" % PICO_TARGET if ratio <= PICO_TARGET else " (over %g×)" % PICO_TARGET
            cells.append("%s ÷ %s = %s%s" % (f_ns(hz_ns), f_ns(p_ns), f_ratio(ratio), mark)
                         if ratio is not None else "–")
        cells.append(" / ".join(f_int((by.get(i) or {}).get("instructions"))
                                for i in (SUBJECT, PICO_SSE42, PICO_DEBIAN)))
        rows.append(cells)
    out = ["\nhttpz against picohttpparser (h2o's parser; issue 15's target: at most %g× the "
           "time of its SSE4.2 build on every request). Time ratio = httpz's median ÷ the peer's, "
           "from the same interleaved run; instructions from callgrind, which cannot run the "
           "SSE4.2 build (valgrind lacks its pcmpestri mode), hence its \"–\".\n" % PICO_TARGET,
           table(["request", "httpz ÷ picohttpparser SSE4.2", "httpz ÷ picohttpparser (Debian, no SSE4.2)",
                  "instructions/parse (httpz / SSE4.2 / Debian)"], rows)]
    note = (doc.get("config") or {}).get(PICO_SSE42)
    if not any(r["impl"] == PICO_SSE42 for r in res):
        out.append("\n**picohttpparser SSE4.2 build missing from this run**: %s\n"
                   % (note or "bench/parse/pico_sse42.sh did not produce it"))
    elif note:
        out.append("\nSSE4.2 build: %s\n" % note.split(": /")[0])
    return out


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

LAT_PCTS = [("p50", 50.0), ("p99", 99.0), ("p99.9", 99.9), ("p99.99", 99.99), ("max", None)]
TIMED = [("parse", "parse only"), ("churn", "parse + churn")]
# bench_latency.exe's histogram: log-spaced, 4 buckets per octave.
BUCKET_RATIO = 2 ** 0.25


def lat_stats(r, timed):
    """The percentile dict of one result: the parse alone, or parse + churn."""
    return r if timed == "parse" else r.get("with_churn")


def hist_buckets(hist):
    """[(lower, upper, count)] from [[upper_ns, count], ...] (contiguous
    buckets: only empty ends are trimmed)."""
    out, prev = [], None
    for ub, c in sorted(hist or []):
        out.append((prev if prev is not None else ub / BUCKET_RATIO, ub, c))
        prev = ub
    return out


def pct_interval(hist, q):
    """95% confidence interval of the q-th percentile, in ns: the ranks
    n·p ± 1.96·sqrt(n·p·(1-p)) of the order statistics, read from the
    histogram (so at least one bucket, ≈19% wide). None without a histogram."""
    b = hist_buckets(hist)
    n = sum(c for _, _, c in b)
    if not n or q is None:
        return None
    p = q / 100.0
    sd = math.sqrt(n * p * (1 - p))
    lo_rank = max(1, int(math.floor(n * p - 1.96 * sd)))
    hi_rank = min(n, int(math.ceil(n * p + 1.96 * sd)) + 1)

    def bucket(rank):
        acc = 0
        for lo, hi, c in b:
            acc += c
            if acc >= rank:
                return lo, hi
        return b[-1][0], b[-1][1]
    return bucket(lo_rank)[0], bucket(hi_rank)[1]


def lat_close(a, b, key, q):
    """Too close to call: the percentiles' 95% intervals overlap, or the
    values differ by less than CLOSE (the only test for max, one sample)."""
    va, vb = a.get(key), b.get(key)
    if va is None or vb is None:
        return False
    hi = max(va, vb)
    if hi > 0 and abs(va - vb) / hi < CLOSE:
        return True
    ia, ib = pct_interval(a.get("histogram"), q), pct_interval(b.get("histogram"), q)
    return bool(ia and ib and ia[0] < ib[1] and ib[0] < ia[1])


def lat_compare(hz, peer, timed):
    """[(key, ratio, verdict)] with verdict "lower" | "higher" | "≈"."""
    a, b = lat_stats(hz, timed), lat_stats(peer, timed)
    out = []
    if not a or not b:
        return out
    for key, q in LAT_PCTS:
        if a.get(key) is None or not b.get(key):
            continue
        ratio = a[key] / b[key]
        v = "≈" if lat_close(a, b, key, q) else "lower" if ratio < 1 else "higher"
        out.append((key, ratio, v))
    return out


def lat_verdict(hz, peer, timed, label):
    """One sentence: where httpz's latency is lower, too close to call, higher."""
    cmp = lat_compare(hz, peer, timed)
    if not cmp:
        return ""
    lower = [k for k, _, v in cmp if v == "lower"]
    close = [k for k, _, v in cmp if v == "≈"]
    higher = ["%s (%.2f× %s's)" % (k, x, peer["impl"]) for k, x, v in cmp if v == "higher"]
    parts = []
    if lower:
        parts.append("lower than %s's at %s" % (peer["impl"], ", ".join(lower)))
    if close:
        parts.append("too close to call at %s" % ", ".join(close))
    if higher:
        parts.append("**higher (worse)** at %s" % ", ".join(higher))
    return "%s: httpz is %s." % (label, "; ".join(parts))


def promoted_per_minor(r):
    """Words promoted per minor collection during the phase, or None."""
    n, it, pr = r.get("minor_gcs"), r.get("samples"), r.get("promoted_words_per_iteration")
    if not n or it is None or pr is None:
        return None
    return pr * it / n


def tail_explanation(hz, peer):
    """Why the with-churn tail is not better, from the run's own GC counters;
    only when those counters say so."""
    cmp = dict((k, v) for k, _, v in lat_compare(hz, peer, "churn"))
    if not cmp or (cmp.get("p99.99") == "lower" and cmp.get("max") == "lower"):
        return ""
    ph, pp = promoted_per_minor(hz), promoted_per_minor(peer)
    notbetter = [k for k in ("p99.99", "max") if cmp.get(k) != "lower"]
    txt = ("With the application's allocation inside the timed region, httpz's extreme tail "
           "(%s) is **not** better than %s's: the GC pauses that the churn triggers "
           "land in both timings." % (", ".join(notbetter), peer["impl"]))
    if ph and pp and ph > 1.5 * pp:
        txt += (" A parser that allocates nothing makes collections rarer, not shorter: in the "
                "httpz run the minor heap holds only cache values, which all survive, so each of "
                "its %s minor collections promoted ≈%s words, against ≈%s for each of %s's %s."
                % (f_int(hz.get("minor_gcs")), f_int(ph), f_int(pp), peer["impl"],
                   f_int(peer.get("minor_gcs"))))
    return txt


def latency_section(doc, plot, md, summ, others):
    res = [r for r in doc.get("results", []) if r.get("impl")]
    md.append("## Latency under GC pressure (`bench_latency.exe`, %s mode)\n" % doc.get("mode", "?"))
    lm = doc.get("machine", {})
    stale = [o for o in others if o.get("machine", {}).get("commit")
             and lm.get("commit") and o["machine"]["commit"] != lm["commit"]]
    if stale or (doc.get("mode") and any(o.get("mode") not in (None, doc["mode"]) for o in others)):
        md.append("_**Not from the same run as the rest of this report**: latency.json says "
                  "commit `%s`, %s, %s mode._\n" % (short_commit(lm.get("commit")),
                                                     lm.get("date", "?"), doc.get("mode", "?")))
    if doc.get("description"):
        md.append(doc["description"] + "\n")
    md.append("Two timings of the same loop: **parse only** (the parser under test) and "
              "**parse + churn** (the parse plus the application's cache update, which "
              "allocates identically for both parsers). Latencies of single operations; "
              "**≈** marks a percentile too close to call: the 95%% confidence intervals of the "
              "two percentiles (order statistics, read from the histograms, whose buckets are "
              "≈19%% wide) overlap, or the values differ by less than %d%%. max is a single "
              "sample and gets only the %d%% test.\n" % (100 * CLOSE, 100 * CLOSE))
    rows = []
    for timed, label in TIMED:
        for r in res:
            st = lat_stats(r, timed)
            if not st:
                continue
            rows.append([("**%s**" % r["impl"]) if r["impl"] == SUBJECT else r["impl"], label]
                        + [f_ns(st.get(k)) for k, _ in LAT_PCTS] + [f_ns(st.get("mean"))])
    hz = next((r for r in res if r["impl"] == SUBJECT), None)
    peers = [r for r in res if r["impl"] != SUBJECT]
    ratio_rows = []
    for peer in peers if hz else []:
        for timed, label in TIMED:
            cmp = lat_compare(hz, peer, timed)
            if not cmp:
                continue
            d = {k: "%.2f×%s" % (x, " ≈" if v == "≈" else "") for k, x, v in cmp}
            ratio_rows.append(["httpz ÷ %s" % peer["impl"], label]
                              + [d.get(k, "–") for k, _ in LAT_PCTS])
    md.append(table(["impl", "timed", "p50", "p99", "p99.9", "p99.99", "max", "mean"],
                    rows + [r + [""] for r in ratio_rows]))
    if ratio_rows:
        md.append("Ratio rows: httpz's latency ÷ the peer's (below 1.00× httpz is faster).\n")
    md.append("GC work during each implementation's loop (parse + churn, counted over all "
              "iterations):\n")
    md.append(table(["impl", "iterations", "live heap", "minor GCs", "major cycles",
                     "minor words/iteration", "promoted words/iteration",
                     "promoted words per minor GC"],
                    [[("**%s**" % r["impl"]) if r["impl"] == SUBJECT else r["impl"],
                      f_int(r.get("samples")),
                      "%.0f MB" % (r["live_heap_words"] * 8 / 1e6) if r.get("live_heap_words") else "–",
                      f_int(r.get("minor_gcs")), f_int(r.get("major_cycles")),
                      f_num(r.get("words_per_iteration"), 1),
                      f_num(r.get("promoted_words_per_iteration"), 1),
                      f_int(promoted_per_minor(r))] for r in res]))
    verdicts = []
    for peer in peers if hz else []:
        for timed, label in TIMED:
            v = lat_verdict(hz, peer, timed, label.capitalize())
            if v:
                verdicts.append(v)
        e = tail_explanation(hz, peer)
        if e:
            verdicts.append(e)
    for v in verdicts:
        md.append(v + "\n")
    charts = latency_charts(plot, res)
    for c, alt in charts:
        md.append("![%s](%s)\n" % (alt, c))
    # README block: the percentiles and the ratio rows, and the verdicts.
    srows = [r[:7] for r in rows]
    summ["latency"] = [
        "### Parse latency under GC pressure (%s mode)\n" % doc.get("mode", "?"),
        "One request head parsed per iteration while the program keeps a %s cache live and "
        "replaces one entry per iteration (identical churn for both). **parse only** times the "
        "parser; **parse + churn** also times the cache update, and with it the GC pauses the "
        "application triggers.\n"
        % ("%d MB" % (hz["live_heap_words"] * 8 / 1e6) if hz and hz.get("live_heap_words")
           else "large"),
        table(["impl", "timed", "p50", "p99", "p99.9", "p99.99", "max"],
              srows + ratio_rows)]
    if verdicts:
        summ["latency"].append("\n".join("- " + v for v in verdicts) + "\n")


def latency_charts(plot, res):
    """Histogram (fraction of samples per bucket) and tail (fraction slower
    than x) of each impl × timing, log-log. [(path, alt)]."""
    series = []
    for timed, label in TIMED:
        for r in res:
            st = lat_stats(r, timed)
            if st and st.get("histogram"):
                series.append(("%s, %s" % (r["impl"], label), timed, r["impl"], st["histogram"]))
    if not series:
        return []
    colours = {SUBJECT: "#1f5fbf"}
    others = ["#c8402a", "#2a9d4a", "#8a4fbf"]
    hist_data, tail_data, hist_plots, tail_plots = [], [], [], []
    for k, (title, timed, impl, h) in enumerate(series):
        if impl not in colours:
            colours[impl] = others[(len(colours) - 1) % len(others)]
        style = "lw 2 lc rgb '%s' dt %d" % (colours[impl], 1 if timed == "parse" else 2)
        b = hist_buckets(h)
        total = float(sum(c for _, _, c in b))
        if total <= 0:
            continue
        # steps: horizontal from each bucket's lower bound, closed at the last upper bound
        pts = ["%g %g" % (lo / 1e3, c / total if c else 1e-12) for lo, _, c in b]
        pts.append("%g %g" % (b[-1][1] / 1e3, (b[-1][2] or 1e-12) / total))
        hist_data.append("# %s\n%s\n\n" % (title, "\n".join(pts)))
        hist_plots.append("'latency_gc_hist.dat' index %d using 1:2 with steps %s title '%s'"
                          % (len(hist_plots), style, gp_str(title)))
        above, pts = total, []
        for _, ub, c in b:
            above -= c
            if above > 0:
                pts.append("%g %g" % (ub / 1e3, above / total))
        if pts:
            tail_data.append("# %s\n%s\n\n" % (title, "\n".join(pts)))
            tail_plots.append("'latency_gc_tail.dat' index %d using 1:2 with steps %s title '%s'"
                              % (len(tail_plots), style, gp_str(title)))
    out = []
    if hist_plots:
        c = plot.draw("latency_gc_hist", {"latency_gc_hist.dat": "\n".join(hist_data)},
                      """set title "Parse latency under GC pressure: share of samples per bucket (4 per octave)"
set logscale xy
set format y "%%g"
set yrange [1e-7:1]
set grid
set xlabel "latency (µs)"
set ylabel "share of samples"
set key outside right
plot %s
""" % ", ".join(hist_plots))
        if c:
            out.append((c, "latency histogram under GC pressure"))
    if tail_plots:
        c = plot.draw("latency_gc_tail", {"latency_gc_tail.dat": "\n".join(tail_data)},
                      """set title "Latency tail under GC pressure: share of samples slower than x"
set logscale xy
set format y "%%g"
set grid
set xlabel "latency (µs)"
set ylabel "share slower"
set key outside right
plot %s
""" % ", ".join(tail_plots))
        if c:
            out.append((c, "latency tail under GC pressure"))
    return out


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
    if schema.startswith("httpz-bench-h2-floor"):
        return "floor"  # h2_floor.py's, which prints its own table
    if schema.startswith("httpz-bench-h2/"):
        return "h2"
    if schema.startswith("httpz-bench-ws"):
        return "ws"
    return None


def machine_doc(found):
    """The machine description to show: servers.json's (its nproc is not
    narrowed by taskset), else the parser's, else the latency bench's."""
    for kind in ("servers", "parse", "latency"):
        for _, d in found[kind]:
            if d.get("machine"):
                return d["machine"]
    return {}


def kernel(uname):
    """"Linux 6.1.0-18-amd64 x86_64" from `uname -a`."""
    p = str(uname or "").split()
    if len(p) >= 3:
        return " ".join([p[0], p[2]] + ([p[-2]] if len(p) > 4 else []))
    return uname or "?"


def problem_list(found, resdir):
    out = []
    for _, d in found["servers"]:
        out += [p.splitlines()[0] for p in d.get("problems") or []]
    for kind, label in (("h2", "HTTP/2 bench"), ("ws", "WebSocket bench")):
        for _, d in found[kind]:
            out += report_proto.problems(d, label)
    if os.path.exists(os.path.join(resdir, "parse.json.invalid")):
        out.append("the parser benchmark failed or printed invalid JSON (parse.json.invalid)")
    if os.path.exists(os.path.join(resdir, "latency.json.invalid")):
        out.append("the latency benchmark failed or printed invalid JSON (latency.json.invalid)")
    return out


def summary_block(found, summ, problems):
    """summary.md, which is also the README's generated section: key tables,
    the machine line, the mode, every problem."""
    m = machine_doc(found)
    docs = [d for v in found.values() for _, d in v]
    modes = sorted({d.get("mode") for d in docs if d.get("mode")})
    date = str(m.get("date") or "?")[:10]
    out = ["<!-- generated by bench/report.py from bench/results/*.json: edits here are "
           "overwritten by the next bench/run.sh -->", ""]
    out.append("**Machine:** %s, %s cores, %s; measured %s at commit `%s`%s." % (
        m.get("cpu", "?"), m.get("nproc", "?"), kernel(m.get("uname")), date,
        short_commit(m.get("commit")), " (with uncommitted changes)" if m.get("dirty") else ""))
    # Each step records the load average when it starts; the earlier steps'
    # own work raises it for the later ones, so the lowest is the machine's.
    loads = [d["machine"]["loadavg_start"] for d in docs
             if isinstance(d.get("machine", {}).get("loadavg_start"), (int, float))]
    if loads and min(loads) > 0.5:
        out[-1] += (" Load average %.2f before the first benchmark: other work was running, so "
                    "the numbers are noisier than usual." % min(loads))
    out.append("")
    if "quick" in modes:
        out.append("**These are quick-mode numbers** (%s): one short run per measurement, a smoke "
                   "test of the pipeline. Ratios are rough; `make bench` runs the full set.\n"
                   % ("every benchmark" if modes == ["quick"] else
                      "quick for %s" % ", ".join(k for k, v in found.items()
                                                 for _, d in v if d.get("mode") == "quick")))
    out.append("**≈** marks a comparison too close to call: the min–max ranges of the runs "
               "overlap (for latency percentiles: their 95%% confidence intervals), or the "
               "medians differ by less than %d%%.\n" % (100 * CLOSE))
    for key in ("parser", "server", "compression", "app", "gc", "latency", "h2", "ws"):
        if summ.get(key):
            out += summ[key]
            out.append("")
    if not any(summ.get(k) for k in ("parser", "server", "latency")):
        out.append("No results yet.\n")
    missing = [n for n, k in (("parser", "parse"), ("server", "servers"), ("latency", "latency"))
               if not found[k]]
    if missing:
        out.append("_Not in this run: %s benchmark(s)._\n" % ", ".join(missing))
    if problems:
        out.append("**This run reported %d problem(s):**\n" % len(problems))
        out += ["- %s" % p.replace("|", "/") for p in problems] + [""]
    out.append("Charts and the full tables (every case, min–max, CPU use, instruction counts): "
               "run `make bench`, then see bench/results/REPORT.md.")
    text = "\n".join(out).rstrip() + "\n"
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text


BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


def update_readme(path, block):
    """Replace what lies between the markers; everything else is kept byte
    for byte. Refuses (False) when the markers are missing or out of order."""
    with open(path) as f:
        text = f.read()
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        print("report.py: %s needs exactly one %s followed by one %s; not updated"
              % (path, BEGIN, END), file=sys.stderr)
        return False
    head, rest = text.split(BEGIN)
    _, tail = rest.split(END)
    new = head + BEGIN + "\n" + block + END + tail
    if new != text:
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(new)
        os.replace(tmp, path)
    return True


def main():
    ap = argparse.ArgumentParser(description="Write REPORT.md, summary.md and charts from the "
                                             "benchmark JSON.")
    ap.add_argument("resdir", nargs="?", default=os.path.join(HERE, "results"))
    ap.add_argument("--readme", metavar="README.md",
                    help="also rewrite the part of this file between %s and %s with summary.md"
                    % (BEGIN, END))
    args = ap.parse_args()
    resdir = os.path.abspath(args.resdir)
    if not os.path.isdir(resdir):
        sys.exit("no results directory %s: run bench/run.sh first" % resdir)
    plot = Plot(os.path.join(resdir, "charts"))
    found = {"servers": [], "parse": [], "latency": [], "h2": [], "ws": []}
    ignored = []
    for path in sorted(glob.glob(os.path.join(resdir, "*.json"))):
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            ignored.append("%s (unreadable: %s)" % (os.path.basename(path), e))
            continue
        kind = classify(path, doc)
        if kind == "floor":
            continue
        if kind:
            found[kind].append((path, doc))
        else:
            ignored.append("%s (unknown schema)" % os.path.basename(path))
    docs = [d for v in found.values() for _, d in v]
    md = ["# httpz benchmark report\n",
          "Generated by `bench/report.py` from the JSON in `bench/results/`. "
          "Same machine, same run for every implementation; only ratios measured together "
          "are meaningful.\n"]
    md += machine_lines([machine_doc(found)]) + [""]
    summ = {}
    for path, doc in found["servers"]:
        server_section(doc, plot, md, summ)
    if not found["servers"]:
        md.append("## Static file serving under load\n\nNo server results (servers.json missing).\n")
    for path, doc in found["parse"]:
        parse_section(doc, plot, md, summ)
    if not found["parse"]:
        md.append("## Request-head parser\n\nNo parse.json: `bench_parse.exe` was not built or not run.\n")
    for path, doc in found["latency"]:
        latency_section(doc, plot, md, summ,
                        [d for k in ("servers", "parse") for _, d in found[k]])
    if not found["latency"]:
        md.append("## Latency under GC pressure\n\nNo latency.json: `bench_latency.exe` was not "
                  "built or not run.\n")
    for path, doc in found["h2"]:
        report_proto.h2_section(doc, md, summ)
    for path, doc in found["ws"]:
        report_proto.ws_section(doc, md, summ)
    problems = problem_list(found, resdir)
    if problems:
        md.append("## Problems reported by this run\n")
        md += ["- `%s`" % p for p in problems] + [""]
    if plot.note:
        md.append("_%s_\n" % plot.note)
    if ignored:
        md.append("_Ignored: %s_\n" % ", ".join(ignored))
    with open(os.path.join(resdir, "REPORT.md"), "w") as f:
        f.write("\n".join(md).rstrip() + "\n")
    block = summary_block(found, summ, problems)
    with open(os.path.join(resdir, "summary.md"), "w") as f:
        f.write(block)
    print("report: %s" % os.path.join(resdir, "REPORT.md"))
    print("summary (the README's generated section): %s" % os.path.join(resdir, "summary.md"))
    if args.readme:
        if not update_readme(args.readme, block):
            sys.exit(1)
        print("README section updated: %s" % args.readme)


if __name__ == "__main__":
    main()
