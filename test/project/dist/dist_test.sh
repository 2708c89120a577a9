#!/usr/bin/env bash
# dist/: the systemd units pass `systemd-analyze verify` and keep their
# offline security exposure at or below 3.0 ("OK"); the logrotate snippet
# parses and rotates a log (debug run: nothing is signalled); the
# configuration example the unit starts is accepted by `httpz check`.
# Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../../.."
bin="$PWD/_build/install/default/bin/httpz"
tmp=$(mktemp -d /tmp/httpz-dist.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
check() { # rc name [log]
  if [ "$1" -eq 0 ]; then echo "ok   $2"; passed=$((passed + 1))
  else echo "FAIL $2"; [ -n "${3:-}" ] && tail -20 "$3"; failed=$((failed + 1)); fi
}

# The units name /usr/local/bin/httpz; verify them against the build.
for u in httpz.service httpz.socket; do sed "s#/usr/local/bin/httpz#$bin#g" "dist/$u" >"$tmp/$u"; done
systemd-analyze verify --man=no "$tmp/httpz.service" "$tmp/httpz.socket" >"$tmp/verify.log" 2>&1
[ ! -s "$tmp/verify.log" ]
check $? "systemd-analyze verify: no complaint about httpz.service and httpz.socket" "$tmp/verify.log"

systemd-analyze security --offline=yes --threshold=30 "$tmp/httpz.service" >"$tmp/security.log" 2>&1
rc=$?
score=$(grep -Eo 'exposure level for httpz.service: [0-9.]+' "$tmp/security.log" | grep -Eo '[0-9.]+$')
check $rc "systemd-analyze security: exposure ${score:-?} <= 3.0" "$tmp/security.log"

grep -q '^ExecReload=/bin/kill -HUP \$MAINPID' dist/httpz.service
check $? "reload sends SIGHUP to the supervisor"

# logrotate: SIGUSR1 to the supervisor alone reopens the logs (no reload).
grep -q 'systemctl kill --kill-whom=main --signal=USR1 httpz.service' dist/logrotate && ! grep -q 'systemctl reload' dist/logrotate
check $? "logrotate reopens the logs with SIGUSR1 to the supervisor, not a reload"
# ... and the supervisor may give the new files to the workers' user.
grep -q '^CapabilityBoundingSet=.*CAP_CHOWN' dist/httpz.service && grep -q '^SystemCallFilter=.*fchown' dist/httpz.service
check $? "the unit lets the supervisor chown a rotated log (CAP_CHOWN, fchown)"

# logrotate: the snippet with its paths moved under $tmp.
mkdir -p "$tmp/log"
printf 'line\n' >"$tmp/log/access.log"
sed "s#/var/log/httpz#$tmp/log#; s#create 0640 root adm#create 0640 root root#" dist/logrotate >"$tmp/logrotate.conf"
logrotate -d -f -s "$tmp/state" "$tmp/logrotate.conf" >"$tmp/logrotate.log" 2>&1
grep -q "rotating pattern: $tmp/log/\*.log" "$tmp/logrotate.log" && ! grep -qi 'error' "$tmp/logrotate.log"
check $? "logrotate parses the snippet" "$tmp/logrotate.log"
logrotate -f -s "$tmp/state" "$tmp/logrotate.conf" >"$tmp/rotate.log" 2>&1
[ -e "$tmp/log/access.log.1" ] && [ -e "$tmp/log/access.log" ]
check $? "logrotate rotates a log and creates it again" "$tmp/rotate.log"

"$bin" check --config examples/httpz.conf >"$tmp/check.log" 2>&1 || {
  # The example names certificates made by examples/make-example-certs.sh.
  [ -x examples/make-example-certs.sh ] && grep -q 'certs/' "$tmp/check.log"
}
check $? "httpz check accepts examples/httpz.conf (or only misses its throwaway certificates)" "$tmp/check.log"

# The container's runtime stage installs every package the binary links
# (libc6 and libcrypt1 are in bookworm-slim already).
missing=""
for l in $(ldd "$bin" | awk '/=>/ {print $3}'); do
  pkg=$(dpkg -S "*/$(basename "$(readlink -f "$l")")" 2>/dev/null | head -1 | cut -d: -f1)
  case "$pkg" in libc6|libcrypt1) ;; "") missing="$missing ?$l" ;; *) grep -q "install.* $pkg" dist/Containerfile || missing="$missing $pkg" ;; esac
done
[ -z "$missing" ]
check $? "dist/Containerfile installs the libraries httpz links${missing:+ (missing:$missing)}"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
