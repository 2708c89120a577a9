"""Prometheus metrics: `httpz serve --stats-listen` answers /metrics in the
text exposition format (0.0.4), which `promtool check metrics` accepts; a
real Prometheus server (Debian's `prometheus`, started here on 127.0.0.1
with its own temporary storage) scrapes it once a second, and its query
API returns the responses by status class of both workers and the
target as up. The same totals behind the stats token on the site
(/__httpz/metrics). Bounded: Prometheus is stopped at the end.

By site (issue 39): `httpz serve --config` with two sites and a status
listener; known traffic per site and protocol (HTTP/1.1 by http.client,
HTTP/1.0 by hand, HTTP/2 by curl, an unknown Host that the default site
takes, a 404) gives exact httpz_requests_total{site,protocol,code}; the
duration histogram's buckets never decrease and +Inf = _count = the
requests of that site and protocol; promtool accepts it, and the same
Prometheus scrapes it and answers queries by those labels.

Run: python3 test/e2e/test_prometheus.py   (HTTPZ_IO, HTTPZ_TRANSPORT)
The last line is `N passed, N failed`.
"""

import json
import os
import shutil
import signal
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


A = os.path.join(TMP, "a")
B = os.path.join(TMP, "b")
H.write_file(A, "index.html", b"site a\n")
H.write_file(B, "index.html", b"site b\n")


class SitesServer(H.Server):
    """`httpz serve --config FILE`: sites a.test and b.test (the default),
    2 workers, the status on [sport]."""

    def __init__(self, sport):
        super().__init__(docroot=None, workers=2)
        self.sport = sport
        self.conf_path = os.path.join(TMP, "sites.conf")
        self.extra = ""

    @property
    def argv(self):
        self.write_conf()
        return [self.binary, "serve", "--config", self.conf_path]

    def write_conf(self):
        tls = ""
        if H.TLS:
            _ca, cert, key = H.tls_files()
            tls = "tls_certificate %s;\ntls_certificate_key %s;\n" % (cert, key)
        with open(self.conf_path, "w") as f:
            f.write("listen 127.0.0.1:%d%s;\n%s%sworkers 2;\nstats_listen 127.0.0.1:%d;\n"
                    "site a.test *.a.test { root %s; }\nsite b.test default { root %s; }\n%s"
                    % (self.port, " tls" if H.TLS else "", tls, ("io %s;\n" % H.IO) if H.IO else "",
                       self.sport, A, B, self.extra))


def series(text):
    """{(name, ((label, value), ...)): value} of an exposition text."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name_labels, value = line.rsplit(" ", 1)
        if "{" in name_labels:
            name, rest = name_labels.split("{", 1)
            labels = tuple(sorted(tuple(kv.split("=", 1)) for kv in rest.rstrip("}").split(",")))
            labels = tuple((k, v.strip('"')) for k, v in labels)
        else:
            name, labels = name_labels, ()
        out[(name, labels)] = float(value)
    return out


def get_ex(s, name, **labels):
    return s.get((name, tuple(sorted(labels.items()))))


def h1(port, host, path, n):
    """[n] keep-alive HTTP/1.1 GETs by http.client; their statuses."""
    c = H.http_client(port)
    got = []
    try:
        for _ in range(n):
            c.request("GET", path, headers={"Host": host})
            r = c.getresponse()
            r.read()
            got.append(r.status)
    finally:
        c.close()
    return got


def h10(port, host):
    s = H.connect(port)
    try:
        s.sendall(("GET / HTTP/1.0\r\nHost: %s\r\n\r\n" % host).encode())
        r = H.Reader(s).read_response()
        return r.status if r else None
    finally:
        s.close()


def h2(port, host):
    """One HTTP/2 GET by curl (ALPN over TLS, prior knowledge over TCP):
    (status, the HTTP version curl used)."""
    mode = ["--http2"] if H.TLS else ["--http2-prior-knowledge"]
    p = H.curl(mode + ["-o", "/dev/null", "-w", "%{http_code} %{http_version}", "-H", "Host: " + host,
                       H.url(port, "/")])
    out = p.stdout.decode().split()
    return (int(out[0]), out[1]) if len(out) == 2 else (None, p.stderr)


def by_site(ssrv, promtool):
    """Known traffic per site and protocol, then the exact counts."""
    port, sport = ssrv.port, ssrv.sport
    # The harness's start probe: one GET / (Host 127.0.0.1: the default site).
    st = h1(port, "a.test", "/", 4) + h1(port, "x.a.test", "/missing", 2) + h1(port, "b.test", "/", 2) \
        + h1(port, "elsewhere.test", "/", 1)
    R.check("HTTP/1.1 traffic answered as expected", st == [200] * 4 + [404] * 2 + [200] * 3, st)
    st10 = [h10(port, "a.test"), h10(port, "b.test")]
    R.check("HTTP/1.0: 200 twice", st10 == [200, 200], st10)
    st2 = [h2(port, "a.test") for _ in range(3)] + [h2(port, "b.test")]
    R.check("HTTP/2 by curl: 200 over h2 each time", st2 == [(200, "2")] * 4, st2)
    want = {("a.test", "http1.1", "2xx"): 4, ("a.test", "http1.1", "4xx"): 2, ("a.test", "http1.0", "2xx"): 1,
            ("a.test", "h2", "2xx"): 3, ("b.test", "http1.1", "2xx"): 4, ("b.test", "http1.0", "2xx"): 1,
            ("b.test", "h2", "2xx"): 1}
    text = ""

    def counted():
        nonlocal text
        text = plain_get(sport, "/metrics")[2].decode()
        s = series(text)
        return all(get_ex(s, "httpz_requests_total", site=site, protocol=proto, code=code) == want.get((site, proto, code), 0)
                   for site in ("a.test", "b.test") for proto in ("http1.0", "http1.1", "h2")
                   for code in ("1xx", "2xx", "3xx", "4xx", "5xx"))
    # The last response's count lands as its line would be logged: a scrape
    # may come a moment before it.
    ok = H.wait_until(counted, 5)
    R.check("httpz_requests_total{site,protocol,code}: exact per site, protocol and class "
            "(unknown Host and the start probe: the default site b.test)", ok,
            [l for l in text.splitlines() if l.startswith("httpz_requests_total{site")])
    s = series(text)
    hist_ok, detail = True, []
    for site in ("a.test", "b.test"):
        for proto in ("http1.0", "http1.1", "h2"):
            les = ["0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf"]
            b = [get_ex(s, "httpz_request_duration_seconds_bucket", site=site, protocol=proto, le=le) for le in les]
            count = get_ex(s, "httpz_request_duration_seconds_count", site=site, protocol=proto)
            total = sum(v for (site2, p2, _c), v in want.items() if site2 == site and p2 == proto)
            mono = None not in b and all(b[i] <= b[i + 1] for i in range(len(b) - 1))
            if not (mono and b[-1] == count == total):
                hist_ok = False
            detail.append((site, proto, b, count, total))
    R.check("histogram: buckets never decrease, +Inf = _count = requests of that site and protocol", hist_ok, detail)
    sums = [get_ex(s, "httpz_request_duration_seconds_sum", site="a.test", protocol=p) for p in ("http1.1", "h2")]
    R.check("histogram: _sum > 0 where requests were timed, and well under a second here",
            all(v is not None and 0 < v < 1 for v in sums), sums)
    body = get_ex(s, "httpz_response_body_bytes_total", site="a.test", protocol="h2")
    R.check("response body bytes by site and protocol: 3 x 7 bytes over h2 to a.test", body == 21, body)
    # The scrapes above are answers of the status listener: counted apart.
    again = series(plain_get(sport, "/metrics")[2].decode())
    R.check("the status listener's own answers: site=\"(status)\", not a site's",
            (get_ex(again, "httpz_requests_total", site="(status)", protocol="http1.1", code="2xx") or 0) >= 1
            and get_ex(again, "httpz_requests_total", site="b.test", protocol="http1.1", code="2xx") == 4,
            [l for l in text.splitlines() if l.startswith("httpz_requests_total{site")])
    chk = subprocess.run([promtool, "check", "metrics"], input=text.encode(), capture_output=True, timeout=30)
    R.check("promtool check metrics: clean (no error, no lint)", chk.returncode == 0 and not chk.stdout.strip()
            and not chk.stderr.strip(), (chk.returncode, chk.stdout, chk.stderr))


def reload_adds_a_site(ssrv):
    """SIGHUP with a third site: it gets its own label, the others keep
    their counts."""
    ssrv.extra = "site c.test { root %s; }\n" % A
    ssrv.write_conf()
    old = set(ssrv.children())
    os.kill(ssrv.proc.pid, signal.SIGHUP)
    done = H.wait_until(lambda: "SIGHUP: configuration read again" in ssrv.stderr_text(), 10)
    R.check("reload with a third site: done", done, ssrv.stderr_text()[-500:])
    # Only the new generation's workers may answer c.test (an old one would
    # serve it as the default site).
    gone = H.wait_until(lambda: len(ssrv.children()) == 2 and not (set(ssrv.children()) & old), 15)
    R.check("the old workers gave way to 2 new ones", gone, (old, ssrv.children()))
    st = h1(ssrv.port, "c.test", "/", 2)
    R.check("c.test answered twice", st == [200, 200], st)
    s = {}

    def counted():
        nonlocal s
        s = series(plain_get(ssrv.sport, "/metrics")[2].decode())
        return get_ex(s, "httpz_requests_total", site="c.test", protocol="http1.1", code="2xx") == 2
    ok = H.wait_until(counted, 5)
    R.check("after the reload: c.test counted under its own label; a.test kept its counts (HTTP/1.1 2xx: 4, h2: 3)",
            ok and get_ex(s, "httpz_requests_total", site="a.test", protocol="http1.1", code="2xx") == 4
            and get_ex(s, "httpz_request_duration_seconds_count", site="a.test", protocol="h2") == 3,
            sorted((k, v) for k, v in s.items() if k[0] == "httpz_requests_total" and v))


def main():
    prom = shutil.which("prometheus")
    promtool = shutil.which("promtool")
    R.check("prometheus and promtool are installed (scripts/deps.sh test)", prom and promtool, (prom, promtool))
    if not (prom and promtool):
        return
    sport = H.free_port()
    srv = H.Server(DOC, workers=2, args=["--stats-listen", "127.0.0.1:%d" % sport] + H.STATS_ARGS).start()
    ssrv = SitesServer(H.free_port()).start()
    by_site(ssrv, promtool)
    reload_adds_a_site(ssrv)
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
                "      - targets: ['127.0.0.1:%d', '127.0.0.1:%d']\n" % (sport, ssrv.sport))
    log = open(os.path.join(TMP, "prometheus.log"), "wb")
    p = subprocess.Popen([prom, "--config.file=" + conf, "--storage.tsdb.path=" + data,
                          "--web.listen-address=127.0.0.1:%d" % pport, "--log.level=warn"],
                         stdout=log, stderr=subprocess.STDOUT)
    try:
        ready = H.wait_until(lambda: answers(pport, "/-/ready") == 200, 30)
        R.check("Prometheus is ready", ready)
        up = H.wait_until(lambda: (prom_query(pport, "sum(up)") or {}).get((), 0) == 2.0, 20)
        R.check("Prometheus scrapes both servers: up == 1 each", up, prom_query(pport, "up"))
        for _ in range(10):
            H.request(srv.port, "GET", "/")
        got = {}

        def scraped():
            nonlocal got
            got = prom_query(pport, 'httpz_responses_total{class=~"2xx|4xx",instance="127.0.0.1:%d"}' % sport) or {}
            return got.get((("class", "2xx"),), 0) >= 31 and got.get((("class", "4xx"),)) == 6.0
        # 2xx: the first 21 and 10 more, plus Prometheus's own scrapes (the
        # status listener's answers are responses too); 4xx: the 5 misses
        # and the token-less 404.
        R.check("Prometheus's query API: 2xx >= 31, 4xx == 6, as sent", H.wait_until(scraped, 20), got)
        st, _, now = plain_get(sport, "/metrics")
        line = [l for l in now.decode().splitlines() if l.startswith('httpz_responses_total{class="2xx"}')]
        mine = float(line[0].split()[1]) if line else -1
        R.check("... never more than the server has counted since", got.get((("class", "2xx"),), 0) <= mine, (got, mine))
        conns = prom_query(pport, 'httpz_connections_accepted_total{instance="127.0.0.1:%d"}' % sport) or {}
        R.check("connections accepted scraped", conns.get((), 0) >= 36, conns)
        # The labels by site, as Prometheus stored them.
        by = {}

        def labelled():
            nonlocal by
            by = prom_query(pport, 'httpz_requests_total{site=~"a.test|b.test",code="2xx"}') or {}
            return by.get((("code", "2xx"), ("protocol", "h2"), ("site", "a.test"))) == 3.0
        R.check("Prometheus's query API: httpz_requests_total{site=\"a.test\",protocol=\"h2\",code=\"2xx\"} == 3",
                H.wait_until(labelled, 20), by)
        R.check("... and b.test over HTTP/1.1: 4", by.get((("code", "2xx"), ("protocol", "http1.1"), ("site", "b.test"))) == 4.0, by)
        hq = {}

        def quantile():
            nonlocal hq
            hq = prom_query(pport, 'histogram_quantile(0.5, sum by (le) (httpz_request_duration_seconds_bucket{site="a.test"}))') or {}
            v = hq.get(())
            return v is not None and 0 < v <= 0.005
        R.check("histogram_quantile over the scraped buckets: a.test's median within the first bucket",
                H.wait_until(quantile, 20), hq)
    finally:
        p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        log.close()
    srv.stop_and_check(R, "server exits 0 on SIGTERM")
    ssrv.stop_and_check(R, "the server of sites exits 0 on SIGTERM")


H.part(R, "prometheus", main)
R.finish()
