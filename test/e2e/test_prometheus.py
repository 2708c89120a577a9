"""Prometheus metrics: `httpz serve --stats-listen` answers /metrics in the
text exposition format (0.0.4), which `promtool check metrics` accepts; a
real Prometheus server (Debian's `prometheus`, started here on 127.0.0.1
with its own temporary storage) scrapes it once a second, and its query
API returns the responses by status class of both workers and the
target as up. The same totals behind the stats token on the site
(/__httpz/metrics). Bounded: Prometheus is stopped at the end.

Run: python3 test/e2e/test_prometheus.py   (HTTPZ_IO, HTTPZ_TRANSPORT)
The last line is `N passed, N failed`.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402

R = H.Results("prometheus")
H.suite_deadline(R, 90)
H.require_binary(R)

TMP = R.cleanup(tempfile.mkdtemp(prefix="httpz-e2e-prom-"))
DOC = os.path.join(TMP, "root")
os.mkdir(DOC)
H.write_file(DOC, "index.html", b"hello\n")


def plain_get(port, path, headers=None, timeout=5.0):
    """Plain HTTP whatever the suite's transport: the status listener
    never speaks TLS."""
    h = {"Connection": "close"}
    h.update(headers or {})
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), headers=h)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def answers(port, path):
    try:
        return plain_get(port, path, timeout=1)[0]
    except OSError:
        return None


def prom_query(port, q):
    st, _, body = plain_get(port, "/api/v1/query?query=" + urllib.request.quote(q))
    if st != 200:
        return None
    res = json.loads(body).get("data", {}).get("result", [])
    return {tuple(sorted((k, v) for k, v in r["metric"].items() if k not in ("job", "instance", "__name__"))): float(r["value"][1])
            for r in res}


def main():
    prom = shutil.which("prometheus")
    promtool = shutil.which("promtool")
    R.check("prometheus and promtool are installed (scripts/deps.sh test)", prom and promtool, (prom, promtool))
    if not (prom and promtool):
        return
    sport = H.free_port()
    srv = H.Server(DOC, workers=2, args=["--stats-listen", "127.0.0.1:%d" % sport] + H.STATS_ARGS).start()
    for _ in range(20):
        H.request(srv.port, "GET", "/")
    for _ in range(5):
        H.request(srv.port, "GET", "/missing")
    st, hd, body = plain_get(sport, "/metrics")
    R.check("/metrics on the status listener: 200, the exposition format's content type",
            st == 200 and hd.get("Content-Type", "").startswith("text/plain; version=0.0.4"), (st, hd))
    text = body.decode()
    R.check("responses by class, 2xx counts both workers (the probe + 20)",
            'httpz_responses_total{class="2xx"} 21' in text and 'httpz_responses_total{class="4xx"} 5' in text, text)
    R.check("workers gauge", "httpz_workers 2" in text, text)
    chk = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, timeout=30)
    R.check("promtool check metrics accepts it", chk.returncode == 0, (chk.returncode, chk.stdout, chk.stderr))
    st, _, body2 = H.request(srv.port, "GET", "/__httpz/metrics",
                             headers={"Authorization": H.STATS_AUTH.split(": ", 1)[1]})
    R.check("behind the token on the site: the same families", st == 200 and b"httpz_responses_total" in body2, (st, body2[:200]))
    st, _, _ = H.request(srv.port, "GET", "/__httpz/metrics")
    R.check("without the token: the site's 404", st == 404, st)

    # A real Prometheus, scraping every second.
    pport = H.free_port()
    data = os.path.join(TMP, "prom-data")
    conf = os.path.join(TMP, "prometheus.yml")
    with open(conf, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                "scrape_configs:\n  - job_name: httpz\n    static_configs:\n"
                "      - targets: ['127.0.0.1:%d']\n" % sport)
    log = open(os.path.join(TMP, "prometheus.log"), "wb")
    p = subprocess.Popen([prom, "--config.file=" + conf, "--storage.tsdb.path=" + data,
                          "--web.listen-address=127.0.0.1:%d" % pport, "--log.level=warn"],
                         stdout=log, stderr=subprocess.STDOUT)
    try:
        ready = H.wait_until(lambda: answers(pport, "/-/ready") == 200, 30)
        R.check("Prometheus is ready", ready)
        up = H.wait_until(lambda: (prom_query(pport, "up") or {}).get((), 0) == 1.0, 20)
        R.check("Prometheus scrapes httpz: up == 1", up, prom_query(pport, "up"))
        for _ in range(10):
            H.request(srv.port, "GET", "/")
        got = {}

        def scraped():
            nonlocal got
            got = prom_query(pport, 'httpz_responses_total{class=~"2xx|4xx"}') or {}
            return got.get((("class", "2xx"),), 0) >= 31 and got.get((("class", "4xx"),)) == 6.0
        # 2xx: the first 21 and 10 more, plus Prometheus's own scrapes (the
        # status listener's answers are responses too); 4xx: the 5 misses
        # and the token-less 404.
        R.check("Prometheus's query API: 2xx >= 31, 4xx == 6, as sent", H.wait_until(scraped, 20), got)
        st, _, now = plain_get(sport, "/metrics")
        line = [l for l in now.decode().splitlines() if l.startswith('httpz_responses_total{class="2xx"}')]
        mine = float(line[0].split()[1]) if line else -1
        R.check("... never more than the server has counted since", got.get((("class", "2xx"),), 0) <= mine, (got, mine))
        conns = prom_query(pport, "httpz_connections_accepted_total") or {}
        R.check("connections accepted scraped", conns.get((), 0) >= 36, conns)
    finally:
        p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        log.close()
    srv.stop_and_check(R, "server exits 0 on SIGTERM")


H.part(R, "prometheus", main)
R.finish()
