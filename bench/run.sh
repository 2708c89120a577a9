#!/usr/bin/env bash
# Runs every benchmark, one at a time, then writes the report.
# Usage: bench/run.sh quick|full      (make bench-quick / make bench build first)
#
#   1. parser/response-writer microbenchmark, if built:
#      _build/default/bench/parse/bench_parse.exe --json --quick|--full, pinned
#      to CPU 1  -> bench/results/parse.json
#   1b. full mode only: instruction counts under callgrind,
#      bench/parse/instructions.sh --quick --merge bench/results/parse.json
#   1c. parse latency under GC pressure, if built:
#      _build/default/bench/latency/bench_latency.exe --json --quick|--full,
#      pinned to CPU 1  -> bench/results/latency.json
#   2. server load benchmarks: bench/server/bench_servers.py  -> bench/results/servers.json
#   3. bench/report.py --readme README.md  -> bench/results/REPORT.md, summary.md,
#      charts/, and README.md's section between <!-- bench:begin --> and
#      <!-- bench:end --> rewritten with summary.md
#
# Time budget on a 2-core machine. Measured: a quick run with httpz and the
# four peers took 80 s (parser 4 s, latency 7 s, servers 69 s against 79 s by
# the rules below); earlier, bench_latency --quick ≈ 8 s and
# instructions.sh --quick ≈ 23 s.
#   full:  23 server×case pairs × (start ≈0.5 s + 1 s warm-up + 3 runs × 10 s)   ≈ 725 s
#          h2load second opinion, 5 servers × (0.5 + 1 + 5 s)                  ≈  33 s
#          GC under load, 2 cases × 2 servers × (0.5 + 1 + 5 s)                 ≈  26 s
#          parser bench: ≈ 10 s, killed at 60 s                                 ≤  60 s
#          callgrind instruction counts: ≈ 23 s, killed at 45 s                 ≤  45 s
#          latency bench: 7.5× quick's iterations, ≈ 30-50 s (not yet
#            measured), killed at 90 s                                          ≤  90 s
#          report                                                               ≈   3 s
#          total ≈ 14.3 min typical; only if every step ran to its time
#          limit 16.4 min
#   quick: 15 pairs × (0.5 + 1 s warm-up + 1 run × 2 s)                         ≈  54 s
#          h2load 5 × (0.5 + 1 + 2 s) ≈ 18 s; GC 2 × (0.5 + 1 + 2 s) ≈ 7 s
#          parser bench: ≈ 5 s, killed at 30 s; latency bench ≈ 8 s, killed
#          at 20 s; no callgrind; report ≈ 2 s
#          total ≈ 95 s estimated, 80 s measured; at most 131 s (2.2 min)
# Benchmarks never overlap: each step waits for the previous one, and a lock
# file refuses a second concurrent bench/run.sh. Every server started is
# stopped on exit, error, Ctrl-C or SIGTERM.
set -uo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
case "$mode" in
  quick) parse_flag=--quick; parse_limit=30; latency_limit=20 ;;
  full)  parse_flag=--full;  parse_limit=60; latency_limit=90 ;;
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
    echo "== instruction counts ($instr --quick --merge, limit 45s)"
    t0=$SECONDS
    if step timeout -k 5 45 "$instr" --quick --merge "$results/parse.json" >"$state/instructions.log"; then
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

# The report also rewrites README.md between <!-- bench:begin --> and
# <!-- bench:end --> with summary.md (the machine, the mode, the key tables).
echo "== report"
step python3 bench/report.py "$results" --readme README.md || status=1

echo "bench/run.sh $mode: done in $(( $(date +%s) - start )) s"
echo "report: $results/REPORT.md (README.md's generated section: $results/summary.md)"
[ $status -eq 0 ] || echo "bench/run.sh: some steps reported problems (see above and the report)" >&2
exit $status
