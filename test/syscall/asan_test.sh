#!/usr/bin/env bash
# Builds sys/httpz_stubs.c's and lib/simd_stubs.c's C helpers with AddressSanitizer and
# UndefinedBehaviorSanitizer into test/syscall/asan_driver.c, runs it, and
# ends with "N passed, N failed" (scripts/test.sh runs every *_test.sh).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
server=$(cd "$here/../../sys" && pwd)
lib=$(cd "$here/../../lib" && pwd)
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

# Leak checking is opt-in (ASAN_OPTIONS=detect_leaks=1 passes here): LSan
# dies in sandboxes that deny ptrace, which would read as a failure.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
"$work/asan_driver" >"$work/out.log" 2>&1
rc=$?
cat "$work/out.log"
if ! grep -qE '^[0-9]+ passed, [0-9]+ failed$' "$work/out.log"; then
  echo "asan: driver died (rc=$rc) before its summary"
  echo "0 passed, 1 failed"
  exit 1
fi
exit $rc
