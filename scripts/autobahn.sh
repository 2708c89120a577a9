#!/usr/bin/env bash
# Autobahn|Testsuite, sections 1-13 in full, against examples/ws_echo.exe on
# each backend (io_uring, epoll) and transport (ws://, wss://), one server
# per run; prints each run's totals by verdict and fails when a case ends
# anything but OK, NON-STRICT or INFORMATIONAL. Takes a while (sections
# 12-13 compress megabytes in Autobahn's Python 2 client): `make autobahn`.
# The fixed subset that `make test` runs is test/e2e/test_websocket.py.
# Usage: scripts/autobahn.sh [uring|epoll ...] (default: both);
# AUTOBAHN_CASES='"1.1.*", "5.*"' runs those cases instead.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${AUTOBAHN_DIR:-$HOME/.cache/httpz/autobahn}"
wstest="$dir/bin/wstest"
[ -x "$wstest" ] || { echo "autobahn: $wstest missing: run scripts/deps.sh test" >&2; exit 1; }
dune build ./examples/ws_echo.exe
echo_exe=$PWD/_build/default/examples/ws_echo.exe
work=$(mktemp -d -t httpz-autobahn-XXXXXX)
trap 'rm -rf "$work"' EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=localhost \
  -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
backends=("$@")
[ ${#backends[@]} -gt 0 ] || backends=(uring epoll)
cases=${AUTOBAHN_CASES:-'"1.*", "2.*", "3.*", "4.*", "5.*", "6.*", "7.*", "9.*", "10.*", "12.*", "13.*"'}
status=0
for io in "${backends[@]}"; do
  for transport in plain tls; do
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    args=(); scheme=ws
    if [ "$transport" = tls ]; then args=(--tls-cert "$work/cert.pem" --tls-key "$work/key.pem"); scheme=wss; fi
    run="$work/$io-$transport"
    mkdir -p "$run"
    "$echo_exe" -p "$port" --io "$io" "${args[@]}" 2>"$run/server.log" &
    pid=$!
    sleep 0.5
    cat > "$run/spec.json" <<JSON
{"outdir": "$run/report", "servers": [{"agent": "httpz", "url": "$scheme://127.0.0.1:$port"}],
 "cases": [$cases],
 "exclude-cases": [], "exclude-agent-cases": {}}
JSON
    start=$(date +%s)
    (cd "$run" && PYENV_VERSION=2.7.18 PYTHONUSERBASE="$dir" "$wstest" -m fuzzingclient -s spec.json >wstest.log 2>&1) || true
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    python3 - "$run/report/index.json" "$io/$transport" "$(( $(date +%s) - start ))" <<'PY' || status=1
import collections, json, sys
path, name, secs = sys.argv[1:]
try:
    cases = json.load(open(path))["httpz"]
except (OSError, ValueError, KeyError) as e:
    print("%-12s no report (%s)" % (name, e)); sys.exit(1)
good = ("OK", "NON-STRICT", "INFORMATIONAL")
count = collections.Counter(v["behavior"] for v in cases.values())
bad = sorted((k for k, v in cases.items() if v["behavior"] not in good or v["behaviorClose"] not in good),
             key=lambda k: [int(x) for x in k.split(".")])
print("%-12s %d cases in %s s: %s%s" % (name, len(cases), secs,
      ", ".join("%s %d" % kv for kv in sorted(count.items())),
      ("; not passing: " + " ".join(bad[:30])) if bad else ""))
sys.exit(1 if bad else 0)
PY
  done
done
exit $status
