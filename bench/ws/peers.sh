#!/usr/bin/env bash
# Builds the WebSocket benchmark's peers and load generator, when missing:
#   _build/ws-peers/echo, _build/ws-peers/load  (Go, gorilla/websocket from
#   the Go module proxy, versions pinned in bench/ws/go/go.mod and go.sum)
#   bench/ws/node/node_modules/ws               (npm, pinned in package.json
#   and package-lock.json)
# Idempotent; a peer that cannot be built is reported, and bench_ws.py leaves
# it out of the run with a note.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=_build/ws-peers
mkdir -p "$out"
export PATH="$PATH:/usr/local/go/bin"
if [ ! -x "$out/echo" ] || [ ! -x "$out/load" ]; then
  if command -v go >/dev/null; then
    (cd bench/ws/go && go build -o "../../../$out/" ./echo ./load) \
      || echo "bench/ws/peers.sh: go build failed: gorilla peer unavailable" >&2
  else
    echo "bench/ws/peers.sh: no go command: gorilla peer unavailable" >&2
  fi
fi
if [ ! -d bench/ws/node/node_modules/ws ]; then
  if command -v npm >/dev/null; then
    (cd bench/ws/node && npm ci --no-audit --no-fund --silent) \
      || echo "bench/ws/peers.sh: npm ci failed: Node ws peer unavailable" >&2
  else
    echo "bench/ws/peers.sh: no npm: Node ws peer unavailable" >&2
  fi
fi
