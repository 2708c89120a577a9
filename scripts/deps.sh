#!/usr/bin/env bash
# Idempotent install of every Debian package httpz needs.
# Usage: scripts/deps.sh [build|test|bench|all]   (default: test, which includes build)
# Skips packages already installed; runs `apt-get update` only when something is missing.
set -euo pipefail

build_pkgs=(
  ocaml-nox ocaml-dune ocaml-findlib gcc make
  libcmdliner-ocaml-dev libmagic-mime-ocaml-dev liblwt-ocaml-dev
  libssl-dev liburing-dev libzip-ocaml-dev zlib1g-dev libcrypt-dev libipaddr-ocaml-dev
  libre-ocaml-dev libpcre2-dev libsqlite3-ocaml-dev libpostgresql-ocaml-dev libyojson-ocaml-dev
)
# The two SQL session stores (httpz.session_sqlite, httpz.session_postgresql)
# are installed libraries, hence build dependencies above; the PostgreSQL
# server their tests start (test/e2e/test_sessions_sql.py) is a test one.
# `dune build` compiles the benchmarks too (so CI keeps them building), hence
# cohttp and http_parser are test dependencies, not only bench ones (and
# tyxml, which bench/templating compares with Html's escaping).
test_pkgs=(
  libalcotest-ocaml-dev libqcheck-ocaml-dev libtyxml-ocaml-dev
  libcohttp-ocaml-dev libcohttp-lwt-unix-ocaml-dev libhttp-parser-dev
  python3 python3-h11 python3-hyperframe python3-wsproto python3-hpack python3-h2 curl wrk chromium procps util-linux
  openssl testssl.sh nghttp2-client postgresql systemd logrotate prometheus fail2ban
  h2o
)
# h2o is a test package: test/lib/h1/h1client's interop test talks to it (and the
# benchmarks compare with it). libh2o-evloop-dev: Debian's picohttpparser (phr_parse_request, built
# without SSE4.2), a parser peer; python3-pip: bench/parse/pico_sse42.sh
# fetches picohttpparser's C source from PyPI for the SSE4.2 build.
# linux-perf: bench/server/h2_floor.py samples where the CPU goes.
bench_pkgs=(
  nginx-light lighttpd gnuplot-nox valgrind strace
  libh2o-evloop-dev python3-pip linux-perf
)

# test/project/build/build_test.sh reads this list to check that `make build`
# needs nothing else.
if [ "${1:-}" = "--print-build" ]; then echo "${build_pkgs[@]}"; exit 0; fi

case "${1:-test}" in
  build) want=("${build_pkgs[@]}") ;;
  test)  want=("${build_pkgs[@]}" "${test_pkgs[@]}") ;;
  bench) want=("${build_pkgs[@]}" "${test_pkgs[@]}" "${bench_pkgs[@]}") ;;
  all)   want=("${build_pkgs[@]}" "${test_pkgs[@]}" "${bench_pkgs[@]}") ;;
  *) echo "usage: $0 [build|test|bench|all]" >&2; exit 2 ;;
esac

# h2spec (HTTP/2 conformance, test/e2e/test_h2.py) is a Go module, not a
# Debian package: built once into $HTTPZ_TOOLS/bin (default
# ~/.local/httpz-tools/bin), where the test looks for it. Skipped when there.
h2spec_version="v2.2.1+incompatible"
install_h2spec() {
  local bin="${HTTPZ_TOOLS:-$HOME/.local/httpz-tools}/bin"
  [ -x "$bin/h2spec" ] && return 0
  command -v h2spec >/dev/null 2>&1 && return 0
  local go
  go="$(command -v go || true)"
  [ -z "$go" ] && [ -x /usr/local/go/bin/go ] && go=/usr/local/go/bin/go
  [ -z "$go" ] && [ -x /usr/lib/go/bin/go ] && go=/usr/lib/go/bin/go
  if [ -z "$go" ]; then
    echo "deps.sh: no Go toolchain for h2spec (install golang-go); test_h2.py fails its h2spec checks" >&2
    return 0
  fi
  mkdir -p "$bin"
  echo "deps.sh: building h2spec $h2spec_version into $bin" >&2
  GOBIN="$bin" GOFLAGS=-mod=mod "$go" install "github.com/summerwind/h2spec/cmd/h2spec@$h2spec_version"
}

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
# Autobahn|Testsuite (WebSocket conformance, test/e2e/test_websocket.py and
# `make autobahn`): PyPI's autobahntestsuite runs on Python 2.7 only, which
# the machine image has under pyenv; installed once into AUTOBAHN_DIR.
autobahn() {
  local dir="${AUTOBAHN_DIR:-$HOME/.cache/httpz/autobahn}"
  [ -x "$dir/bin/wstest" ] && return 0
  echo "deps.sh: installing autobahntestsuite into $dir" >&2
  mkdir -p "$dir"
  PYENV_VERSION=2.7.18 PYTHONUSERBASE="$dir" python -m pip install -q --user --no-warn-script-location 'setuptools<45'
  PYENV_VERSION=2.7.18 PYTHONUSERBASE="$dir" python -m pip install -q --user --no-warn-script-location autobahntestsuite
}

# The conformance tools that are no Debian package, for `make test`.
conformance_tools() {
  case "${1:-test}" in build) ;; *) install_h2spec; autobahn ;; esac
}

if [ ${#missing[@]} -eq 0 ]; then
  conformance_tools "${1:-test}"
  exit 0
fi

echo "deps.sh: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
# Servers installed for benchmarking must not start as system services: the bench
# scripts start them with their own configs. policy-rc.d (exit 101) is Debian's
# documented way to forbid service starts during package installation.
policy=/usr/sbin/policy-rc.d
added_policy=""
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod 755 "$policy"
  added_policy=1
fi
trap '[ -n "$added_policy" ] && $sudo rm -f "$policy"' EXIT
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
conformance_tools "${1:-test}"
