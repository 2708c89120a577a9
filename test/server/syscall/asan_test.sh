#!/usr/bin/env bash
# Builds sys/httpz_stubs.c's and lib/core/simd_stubs.c's C helpers with AddressSanitizer and
# UndefinedBehaviorSanitizer into test/server/syscall/asan_driver.c, runs it, and
# ends with "N passed, N failed" (scripts/test.sh runs every *_test.sh).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
server=$(cd "$here/../../../sys" && pwd)
lib=$(cd "$here/../../../lib/core" && pwd)
cc=${CC:-gcc}
work=$(mktemp -d /tmp/httpz-asan.XXXXXX)
trap 'rm -rf "$work"' EXIT

if ! "$cc" -std=gnu11 -O1 -g -fno-omit-frame-pointer \
     -fsanitize=address,undefined -fno-sanitize-recover=all \
     -Wall -Wextra -Werror -I"$server" -I"$lib" \
     "$here/asan_driver.c" -o "$work/asan_driver" >"$work/cc.log" 2>&1; then
  cat "$work/cc.log"
  echo "asan: build failed"
  echo "0 passed, 1 failed"
  exit 1
fi

# The TLS and io_uring helpers, linked against libssl and liburing.
if ! "$cc" -std=gnu11 -O1 -g -fno-omit-frame-pointer \
     -fsanitize=address,undefined -fno-sanitize-recover=all \
     -Wall -Wextra -Werror -I"$server" \
     "$here/asan_tls_uring.c" -o "$work/asan_tls_uring" -lssl -lcrypto -luring >"$work/cc2.log" 2>&1; then
  cat "$work/cc2.log"
  echo "asan: build of the TLS and io_uring driver failed"
  echo "0 passed, 1 failed"
  exit 1
fi
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
  -keyout "$work/key.pem" -out "$work/cert.pem" >/dev/null 2>&1

# Leak checking is opt-in (ASAN_OPTIONS=detect_leaks=1 passes here): LSan
# dies in sandboxes that deny ptrace, which would read as a failure.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
total_p=0; total_f=0; status=0
for d in "asan_driver" "asan_tls_uring $work/cert.pem $work/key.pem"; do
  # shellcheck disable=SC2086
  "$work"/$d >"$work/out.log" 2>&1
  rc=$?
  grep -vE '^[0-9]+ passed, [0-9]+ failed$' "$work/out.log"
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$work/out.log" | tail -1)
  if [ -z "$line" ]; then
    echo "asan: ${d%% *} died (rc=$rc) before its summary"
    total_f=$((total_f + 1)); status=1; continue
  fi
  p=${line%% passed*}; f=${line##*passed, }; f=${f%% failed}
  total_p=$((total_p + p)); total_f=$((total_f + f))
  [ "$rc" -ne 0 ] && status=1
done
echo "$total_p passed, $total_f failed"
exit $status
