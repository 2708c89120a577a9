#!/usr/bin/env bash
# Instructions per operation, counted by callgrind: stable where wall-clock
# time is not (a shared 2-core machine). For each implementation × request,
# runs `bench_parse.exe --callgrind-one IMPL REQUEST N` under
# `valgrind --tool=callgrind` for N = N1 and N = N2 and reports
# (Ir(N2) - Ir(N1)) / (N2 - N1): start-up, corpus loading and set-up cancel
# out, and the GC work an allocating parser causes is included, amortised.
#
# Usage: bench/parse/instructions.sh [--quick] [--merge PARSE_JSON]
#   default  N1 = 1000, N2 = 11000 (about 40 s on 2 cores: cohttp runs up to
#            ~220k instructions per parse, and callgrind is ~50x slower than
#            native)
#   --quick  N1 = 100,  N2 = 1100  (about 10 s on 2 cores, mostly valgrind
#            start-up for the 30 runs; the N1 and N2 runs go in parallel).
#            Same counts as the default for httpz and http_parser (they do
#            the same work every time); within ~1.5% for
#            cohttp, whose minor GCs amortise differently over fewer parses
#            (medium: 41,156 quick vs 40,556 default).
#   --merge  also write the counts into PARSE_JSON (bench_parse --json output):
#            each results[] / response[] entry gets "instructions", and the
#            top-level "instructions" list gets the lines printed below.
# Prints one JSON object per line on stdout:
#   {"impl": "httpz", "request": "medium", "per_parse": 1234.5, "n": [1000, 11000], "ir": [a, b]}
#   {"impl": "httpz", "case": "full_head", "per_op": 567.8, ...}      (response writers)
# Needs valgrind (scripts/deps.sh bench) and a built bench_parse.exe.
set -euo pipefail
cd "$(dirname "$0")/../.."

n1=1000 n2=11000 merge=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) n1=100 n2=1100 ;;
    --merge) merge=${2:?--merge needs a file}; shift ;;
    *) echo "usage: $0 [--quick] [--merge PARSE_JSON]" >&2; exit 2 ;;
  esac
  shift
done

exe=_build/default/bench/parse/bench_parse.exe
[ -x "$exe" ] || { echo "instructions.sh: $exe not built" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind not installed (scripts/deps.sh bench)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/httpz-callgrind.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# Total instructions of one run, from callgrind's "Collected : N" line;
# empty when the run fails (an implementation that is not installed).
# $4 names the run's own output files, so two runs can go at once.
ir() {
  valgrind --tool=callgrind --callgrind-out-file="$tmp/$4.out" "$exe" --callgrind-one "$1" "$2" "$3" \
    >/dev/null 2>"$tmp/$4.err" || return 0
  sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$tmp/$4.err"
}

lines="$tmp/lines"
: >"$lines"
one() { # impl what key per-key
  local a b
  # The N1 and N2 runs go in parallel, one per core: callgrind counts
  # instructions, not time, so they cannot disturb each other's numbers, and
  # this step runs alone (bench/run.sh), which halves its ~18 s.
  ir "$1" "$2" "$n1" a >"$tmp/a" &
  ir "$1" "$2" "$n2" b >"$tmp/b"
  wait
  a=$(cat "$tmp/a"); b=$(cat "$tmp/b")
  if [ -z "$a" ] || [ -z "$b" ]; then
    echo "instructions.sh: $1 $2 did not run (not installed?), skipped" >&2
    return 0
  fi
  python3 -c 'import json,sys
impl,what,key,per,n1,n2,a,b=sys.argv[1:]
n1,n2,a,b=int(n1),int(n2),int(a),int(b)
print(json.dumps({"impl":impl,key:what,per:round((b-a)/(n2-n1),1),"n":[n1,n2],"ir":[a,b]}))' \
    "$1" "$2" "$3" "$4" "$n1" "$n2" "$a" "$b" | tee -a "$lines"
}

# picohttpparser_sse42 is not counted: valgrind 3.19 does not implement
# pcmpestri with the ranges mode picohttpparser uses (SIGILL), so its
# column has times but no instruction counts.
# httpz_portable (Request without its C kernel) on request only,
# HTTPZ_BENCH_PORTABLE=1: four more pairs would not fit bench/run.sh's
# 40 s for this step on a loaded machine.
portable=""
[ "${HTTPZ_BENCH_PORTABLE:-}" = 1 ] && portable=httpz_portable
for req in small medium large headers50; do
  for impl in httpz $portable cohttp http_parser picohttpparser; do
    one "$impl" "$req" request per_parse
  done
done
one httpz full_head case per_op
one httpz status_line case per_op
one cohttp full_head case per_op

if [ -n "$merge" ]; then
  python3 - "$merge" "$lines" <<'PY'
import json, os, sys
path, lines = sys.argv[1], sys.argv[2]
doc = json.load(open(path))
got = [json.loads(l) for l in open(lines) if l.strip()]
for g in got:
    if "request" in g:
        for r in doc.get("results", []):
            if r.get("impl") == g["impl"] and r.get("request") == g["request"]:
                r["instructions"] = round(g["per_parse"])
    else:
        for r in doc.get("response", []):
            if r.get("impl") == g["impl"] and r.get("case") == g["case"]:
                r["instructions"] = round(g["per_op"])
doc["instructions"] = got
tmp = path + ".tmp"
with open(tmp, "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
os.replace(tmp, path)
print("instructions.sh: merged %d counts into %s" % (len(got), path), file=sys.stderr)
PY
fi
