#!/usr/bin/env bash
# Runs every benchmark, one at a time, then writes the report.
# Usage: bench/run.sh quick|full      (make bench-quick / make bench build first)
#
#   1. parser/response-writer microbenchmark, if built, after
#      bench/parse/pico_sse42.sh has fetched picohttpparser's C source from
#      PyPI and built it with SSE4.2 (HTTPZ_PICO_SSE42; skipped with a note
#      when that fails):
#      _build/default/bench/parse/bench_parse.exe --json --quick|--full, pinned
#      to CPU 1  -> bench/results/parse.json
#   1b. full mode only: instruction counts under callgrind,
#      bench/parse/instructions.sh --quick --merge bench/results/parse.json
#      (not pinned: it counts instructions, not time, and uses both cores)
#   1c. parse latency under GC pressure, if built:
#      _build/default/bench/latency/bench_latency.exe --json --quick|--full,
#      pinned to CPU 1  -> bench/results/latency.json
#   2. server load benchmarks: bench/server/bench_servers.py  -> bench/results/servers.json
#      (per case all servers at once, wrk rounds then h2load rounds, interleaved)
#   2b. HTTP/2: bench/server/bench_h2.py -> bench/results/h2.json (httpz,
#      h2o, nginx; h2load -c64 -m10 / -m1, 612 B and 16 KiB, TLS and h2c,
#      interleaved rounds; memory per idle HTTP/2 connection)
#   2c. WebSocket: bench/ws/peers.sh builds gorilla's echo server and the Go
#      load generator (Go module proxy) and installs Node's ws (npm) when
#      missing; bench/ws/bench_ws.py -> bench/results/ws.json (echo round
#      trips and server CPU per message, 32 B and 16 KiB, 64 connections;
#      memory per idle WebSocket)
#   3. bench/report.py --readme README.md  -> bench/results/REPORT.md, summary.md,
#      charts/, and README.md's section between <!-- bench:begin --> and
#      <!-- bench:end --> rewritten with summary.md
#
# Time budget on a 2-core machine: `make bench` must finish in 18 minutes
# (15 before the HTTP/2 and WebSocket steps); aim for 17.5. Measured step by step
# (2 cores, AMD EPYC): parser bench --full 15 s (60 ms batches; 30 s with the
# earlier 120 ms), callgrind instruction counts 11 s (the two runs of each
# pair in parallel; 18 s one at a time), latency bench --full 33 s, report
# ≈ 3 s, `scripts/deps.sh bench` 0.3 s, `dune build`
# 1-2 s when up to date and 17 s after edits to server/*.ml. Server
# cases per pair: start 0.05 s, warm-up 1.02 s, a 5 s wrk run 5.04 s,
# an h2load run warm-up + duration + 0.02 s, stop ≈ 0.1 s (MODES in
# bench/server/bench_servers.py has the arithmetic).
#   full:  36 server×case pairs × (0.05 + 1 s warm-up + 3 wrk runs × 4.04
#            + 0.1)                                                    ≈ 478 s
#          h2load on the same instances, the 34 pinned pairs, 3 runs
#            each: 26 × 3 × (0.5 s warm-up + 1 s + 0.02) + 8
#            Connection: close pairs × 3 × 1.02 (count mode)           ≈ 143 s
#          GC under load: measured during the main runs, except
#            cohttp on 1m_c64 (not in that case): 0.05 + 1 + 4 + 0.1   ≈   5 s
#          16k_gzip (compression: httpz, httpz --compress, nginx
#            gzip; 3 runs of 2 s, no h2load): 3 × (0.05 + 1.02 + 3 ×
#            2.04 + 0.1)                                               ≈  22 s
#          todos_c64 (GET /todos/:id: httpz Route, httpz hand-written
#            match, cohttp; 3 runs of 1 s, no h2load): 3 × (0.05 +
#            1.02 + 3 × 1.04 + 0.1)                                    ≈  13 s
#          system calls per request (strace -c, one wrk run of 2 s
#            per server on 612b_c64 and 16k_c64): 10 × ≈ 4.7 s         ≈  47 s
#          picohttpparser SSE4.2 build (pip download + cc): 4 s,
#            its download killed at 20 s                               ≤  22 s
#          parser bench: 23 s (23 cases), killed at 40 s               ≤  40 s
#          callgrind instruction counts: 15 s (19 pairs), killed
#            at 40 s                                                   ≤  40 s
#          latency bench: 39 s (2M iterations), killed at 60 s        ≤  60 s
#          HTTP/2: 2 transports × 4 cases × 3 servers × 7 rounds × (0.3 s
#            warm-up + 0.7 s + ≈ 0.05) + 6 starts + idle memory (1000
#            connections, 6 × ≈ 3 s)                                    ≈ 195 s
#          WebSocket: 2 sizes × 3 servers × 5 rounds × (0.3 + 1 + 0.05)
#            + idle memory (10,000 connections, 3 × ≈ 8 s)              ≈  65 s
#          report                                                      ≈   3 s
#          deps + build                                                ≈ 2-17 s
#          total ≈ 1052 s + build = 17.5-17.8 min (792 s before the
#          HTTP/2 and WebSocket steps); only if the four time-limited
#          steps above all ran to their limits 19.1-19.4 min. The
#          HTTPS cases and the epoll column came with fewer, shorter
#          wrk runs (3 × 4 s instead of 5 × 5 s): the rounds are
#          interleaved, so their paired ratios stay comparable.
#   quick: 21 pairs × (0.05 + 1 s warm-up + 1 run × 2.04 + 0.1)
#            + todos_c64's 3 pairs × (0.05 + 1.02 + 1.04 + 0.1)        ≈  74 s
#          h2load on the 16 pinned pairs: 12 × (0.5 + 1 + 0.02)
#            + 4 × 1.02                                                ≈  22 s
#          GC during the main runs                                     ≈   0 s
#          parser bench: ≈ 5 s, killed at 30 s; latency bench ≈ 8 s,
#          killed at 20 s; no callgrind; report ≈ 2 s
#          total ≈ 98 s + build; at most 143 s + build if the parser and
#          latency benches ran to their limits
# Benchmarks never overlap: each step waits for the previous one, and a lock
# file refuses a second concurrent bench/run.sh. Every server started is
# stopped on exit, error, Ctrl-C or SIGTERM.
set -uo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
case "$mode" in
  quick) parse_flag=--quick; parse_limit=30; latency_limit=20 ;;
  full)  parse_flag=--full;  parse_limit=40; latency_limit=60 ;;
  *) echo "usage: $0 quick|full" >&2; exit 2 ;;
esac

results=bench/results
mkdir -p "$results"
exec 9>"$results/.lock"
if ! flock -n 9; then
  echo "bench/run.sh: another benchmark run holds $results/.lock; not starting a second one" >&2
  exit 1
fi

state=$(mktemp -d /tmp/httpz-bench-run.XXXXXX)
pidfile="$state/server-pgids"
child=""

# Ends the current step (by its pid), then any server process group
# bench_servers.py recorded and did not stop itself.
cleanup() {
  if [ -n "$child" ] && kill -0 "$child" 2>/dev/null; then
    kill -TERM "$child" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$child" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$child" 2>/dev/null
  fi
  child=""
  if [ -s "$pidfile" ]; then
    while read -r pg; do
      [ -n "$pg" ] && kill -TERM -- "-$pg" 2>/dev/null
    done <"$pidfile"
    sleep 0.5
    while read -r pg; do
      [ -n "$pg" ] && kill -KILL -- "-$pg" 2>/dev/null
    done <"$pidfile"
  fi
  rm -rf "$state" "$results/parse.json.tmp" "$results/latency.json.tmp"
}
on_signal() {
  echo "bench/run.sh: interrupted, stopping everything it started" >&2
  cleanup
  exit 130
}
trap cleanup EXIT
trap on_signal INT TERM HUP

# Runs "$@" as the one current step, in the background so the traps above fire
# at once on Ctrl-C (bash defers traps while a foreground child runs).
step() {
  "$@" &
  child=$!
  wait "$child"
  local rc=$?
  child=""
  return $rc
}

start=$(date +%s)
echo "bench/run.sh $mode: $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg)"
# Start from a clean slate: stale numbers from an earlier run never reach the
# report or the README.
rm -rf "$results/raw" "$results/charts" "$results/servers.json" "$results/parse.json" \
  "$results/h2.json" "$results/ws.json" \
  "$results/parse.json.invalid" "$results/latency.json" "$results/latency.json.invalid" \
  "$results/REPORT.md" "$results/summary.md"

# timed NAME LIMIT OUT CMD...: runs CMD pinned to CPU 1 (when there are 2
# cores) under a time limit, its stdout to OUT once it is valid JSON, else to
# OUT.invalid. Prints how long it took.
timed() {
  local name=$1 limit=$2 out=$3 t0=$SECONDS
  shift 3
  local pin=(taskset -c 1)
  [ "$(nproc)" -ge 2 ] || pin=()
  if step timeout -k 5 "$limit" "${pin[@]}" "$@" >"$out.tmp" \
     && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$out.tmp"; then
    mv "$out.tmp" "$out"
    echo "   $name: $((SECONDS - t0)) s"
  else
    echo "$name failed, timed out (${limit}s) or printed invalid JSON: kept as $out.invalid" >&2
    mv "$out.tmp" "$out.invalid"
    return 1
  fi
}

status=0
parse_exe=_build/default/bench/parse/bench_parse.exe
# picohttpparser with SSE4.2, built from C source fetched now into the run's
# temporary directory (never committed): the parser bench and the
# instruction counts find it through HTTPZ_PICO_SSE42. Without it they run
# with the other peers, and the report says the column is missing.
if [ -x "$parse_exe" ]; then
  echo "== picohttpparser SSE4.2 build (bench/parse/pico_sse42.sh)"
  if lib=$(bench/parse/pico_sse42.sh "$state/pico"); then
    export HTTPZ_PICO_SSE42=$lib
    echo "   built $lib"
  else
    echo "picohttpparser SSE4.2 build unavailable (see above): the parser bench goes on without it" >&2
  fi
fi
if [ -x "$parse_exe" ]; then
  echo "== parser microbenchmark ($parse_exe $parse_flag, CPU 1, limit ${parse_limit}s)"
  timed "parser bench" "$parse_limit" "$results/parse.json" "$parse_exe" --json "$parse_flag" \
    || status=1
else
  echo "== parser microbenchmark: not built ($parse_exe missing), skipped"
fi

# Instruction counts are stable where wall-clock time on a shared machine is
# not; callgrind is slow, so full mode only. instructions.sh's --quick sizes
# give the same counts within ~1% (its header).
instr=bench/parse/instructions.sh
if [ "$mode" = full ] && [ -f "$results/parse.json" ] && [ -x "$instr" ]; then
  if command -v valgrind >/dev/null; then
    echo "== instruction counts ($instr --quick --merge, limit 40s)"
    t0=$SECONDS
    if step timeout -k 5 40 "$instr" --quick --merge "$results/parse.json" >"$state/instructions.log"; then
      echo "   instruction counts: $((SECONDS - t0)) s"
    else
      echo "instruction counts failed or timed out: parse.json keeps its timings without them" >&2
      status=1
    fi
  else
    echo "== instruction counts: valgrind not installed (scripts/deps.sh bench), skipped"
  fi
fi

# Parse latency under GC pressure: a few hundred MB live heap and a fixed
# allocation churn, httpz against cohttp (bench/latency/bench_latency.ml).
latency_exe=_build/default/bench/latency/bench_latency.exe
if [ -x "$latency_exe" ]; then
  echo "== latency under GC pressure ($latency_exe $parse_flag, CPU 1, limit ${latency_limit}s)"
  timed "latency bench" "$latency_limit" "$results/latency.json" "$latency_exe" --json "$parse_flag" \
    || status=1
else
  echo "== latency under GC pressure: not built ($latency_exe missing), skipped"
fi

echo "== server load benchmarks"
t0=$SECONDS
step python3 bench/server/bench_servers.py --mode "$mode" --out "$results/servers.json" \
  --pidfile "$pidfile" || status=1
echo "   server benchmarks: $((SECONDS - t0)) s"

# HTTP/2: httpz, h2o and nginx under h2load -m 10 and -m 1, over TLS and h2c,
# and memory per idle HTTP/2 connection.
echo "== HTTP/2 load benchmarks (bench/server/bench_h2.py)"
t0=$SECONDS
if [ "$mode" = full ]; then h2_args=(--rounds 7 --duration 0.7 --idle 1000)
else h2_args=(--rounds 1 --duration 0.5 --idle 200); fi
step python3 bench/server/bench_h2.py "${h2_args[@]}" --out "$results/h2.json" \
  --pidfile "$pidfile" || status=1
echo "   HTTP/2 benchmarks: $((SECONDS - t0)) s"

# WebSocket: examples/ws_echo against Node's ws and gorilla/websocket, and
# memory per idle WebSocket; the peers are built first when missing.
echo "== WebSocket benchmarks (bench/ws/bench_ws.py)"
t0=$SECONDS
bench/ws/peers.sh
if [ "$mode" = full ]; then ws_args=(--rounds 5 --duration 1.0 --idle 10000)
else ws_args=(--rounds 1 --duration 0.5 --idle 1000); fi
step python3 bench/ws/bench_ws.py "${ws_args[@]}" --out "$results/ws.json" \
  --pidfile "$pidfile" || status=1
echo "   WebSocket benchmarks: $((SECONDS - t0)) s"

# The report also rewrites README.md between <!-- bench:begin --> and
# <!-- bench:end --> with summary.md (the machine, the mode, the key tables).
echo "== report"
t0=$SECONDS
step python3 bench/report.py "$results" --readme README.md || status=1
echo "   report: $((SECONDS - t0)) s"

echo "bench/run.sh $mode: done in $(( $(date +%s) - start )) s"
echo "report: $results/REPORT.md (README.md's generated section: $results/summary.md)"
[ $status -eq 0 ] || echo "bench/run.sh: some steps reported problems (see above and the report)" >&2
exit $status
