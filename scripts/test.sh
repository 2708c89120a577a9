#!/usr/bin/env bash
# Runs every test suite and ends with one line: "N passed, N failed".
#  - Alcotest executables: every test/**/test_*.exe that dune built.
#  - Script suites: every test/**/*_test.sh; test/server/tls/test_*.py once per
#    backend (E2E_IO="epoll uring") and test/e2e/test_*.py once per backend
#    and transport (E2E_TRANSPORTS="plain tls"); each must end its output
#    with a line "N passed, N failed".
# A suite that dies without its summary counts as one failure, and so does
# one that outlives SUITE_TIMEOUT seconds (default 300; the slowest takes
# about 20): a hang must fail the run, not stall CI until its time limit.
set -uo pipefail
cd "$(dirname "$0")/.."
export ALCOTEST_COLOR=never
passed=0; failed=0; failed_suites=()
logdir=$(mktemp -d /tmp/httpz-test.XXXXXX)

count_alcotest() { # $1 = log file; prints "passed failed"
  local run fail
  run=$(grep -Eo '[0-9]+ tests? run' "$1" | tail -1 | grep -Eo '^[0-9]+')
  if grep -q 'Test Successful' "$1"; then fail=0
  else fail=$(grep -Eo '[0-9]+ failures?!' "$1" | tail -1 | grep -Eo '^[0-9]+')
  fi
  # A [FAIL] line with a "successful" summary means a forked child of the
  # test ran test code and failed: count it, never hide it.
  if [ "${fail:-0}" = 0 ] && grep -q '\[FAIL\]' "$1"; then fail=1; fi
  if [ -z "$run" ] || [ -z "$fail" ]; then echo "0 1"; else echo "$((run - fail)) $fail"; fi
}
count_plain() {
  local line
  line=$(grep -E '^([A-Za-z]+: )?[0-9]+ passed, [0-9]+ failed' "$1" | tail -1)
  if [ -z "$line" ]; then echo "0 1"; return; fi
  echo "$(echo "$line" | grep -Eo '[0-9]+ passed' | grep -Eo '[0-9]+') $(echo "$line" | grep -Eo '[0-9]+ failed' | grep -Eo '[0-9]+')"
}

run_suite() { # kind name cmd...
  local kind=$1 name=$2; shift 2
  local log="$logdir/$(echo "$name" | tr '/ []' '____').log" start end p f
  start=$(date +%s)
  timeout -k 10 "${SUITE_TIMEOUT:-300}" "$@" >"$log" 2>&1; local rc=$?
  end=$(date +%s)
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "test.sh: $name killed after ${SUITE_TIMEOUT:-300} s (hung?)" >>"$log"
  fi
  if [ "$kind" = alcotest ]; then read -r p f < <(count_alcotest "$log"); else read -r p f < <(count_plain "$log"); fi
  if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  passed=$((passed + p)); failed=$((failed + f))
  printf '%-40s %4d passed %3d failed  (%ds)\n' "$name" "$p" "$f" "$((end - start))"
  if [ "$f" -ne 0 ]; then failed_suites+=("$name"); sed -n '1,200p' "$log" | grep -vE '^\s*\[OK\]' | tail -60; fi
}

for exe in $(find _build/default/test -name 'test_*.exe' | sort); do
  run_suite alcotest "${exe#_build/default/}" "$exe"
done
run_suite plain scripts/protocol_imports.sh bash scripts/protocol_imports.sh
for sh in $(find test -name '*_test.sh' | sort); do
  run_suite plain "$sh" bash "$sh"
done
run_suite plain scripts/protocol_io.sh bash scripts/protocol_io.sh
# Server suites run once per backend (HTTPZ_IO, `--io`), and the
# end-to-end ones once per transport too (HTTPZ_TRANSPORT): the same checks
# over epoll and io_uring, plain TCP and TLS (test/e2e/harness.py). The TLS
# suite (test/server/tls) speaks TLS itself.
for io in ${E2E_IO:-epoll uring}; do
  for py in $(find test/server/tls -name 'test_*.py' 2>/dev/null | sort); do
    run_suite plain "$py [$io]" env HTTPZ_IO="$io" python3 "$py"
  done
  for transport in ${E2E_TRANSPORTS:-plain tls}; do
    for py in $(find test/e2e -name 'test_*.py' 2>/dev/null | sort); do
      run_suite plain "$py [$io $transport]" env HTTPZ_IO="$io" HTTPZ_TRANSPORT="$transport" python3 "$py"
    done
  done
done

if [ ${#failed_suites[@]} -ne 0 ]; then echo "failing suites: ${failed_suites[*]} (logs in $logdir)"; fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
