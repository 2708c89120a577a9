#!/usr/bin/env bash
# `make serve` on a bare machine: the targets `make build` builds
# (BUILD_TARGETS in the Makefile) must build with only the Debian packages
# `scripts/deps.sh build` installs (and what they depend on). Here every
# other OCaml package is out of reach, and the build goes to a separate
# build directory. Needs root (unshare -m), as CI has.
# Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../../.."
tmp=$(mktemp -d /tmp/httpz-build.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
check() { # rc name [log]
  if [ "$1" -eq 0 ]; then echo "ok   $2"; passed=$((passed + 1))
  else echo "FAIL $2"; [ -n "${3:-}" ] && tail -30 "$3"; failed=$((failed + 1)); fi
}

read -r -a pkgs <<<"$(scripts/deps.sh --print-build)"
targets=$(sed -n 's/^BUILD_TARGETS *= *//p' Makefile)
[ -n "$targets" ]
check $? "the Makefile names BUILD_TARGETS ($targets)"

# The Debian packages a bare machine has after `scripts/deps.sh build`.
apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
  --no-replaces --no-enhances "${pkgs[@]}" 2>/dev/null | grep -E '^[a-z0-9]' | sort -u >"$tmp/closure"
# Every OCaml package (a directory with a META) that none of them owns is
# hidden under an empty directory, in a private mount namespace (findlib's
# configuration would not do: dune always searches the standard library's
# directory, where Debian puts every package).
allowed=0; hidden=()
for dir in /usr/lib/ocaml /usr/local/lib/ocaml/4.13.1; do
  [ -d "$dir" ] || continue
  for meta in "$dir"/*/META; do
    [ -e "$meta" ] || continue
    owner=$(dpkg -S "$meta" 2>/dev/null | head -1 | cut -d: -f1)
    if [ -n "$owner" ] && grep -qx "$owner" "$tmp/closure"; then allowed=$((allowed + 1))
    else hidden+=("$(dirname "$meta")"); fi
  done
done
printf '%s\n' "${hidden[@]}" | grep -q '/alcotest$' && printf '%s\n' "${hidden[@]}" | grep -q '/qcheck-core$' \
  && ! printf '%s\n' "${hidden[@]}" | grep -q '/cmdliner$'
check $? "$allowed packages stay, ${#hidden[@]} are hidden (alcotest, qcheck-core among them)"

mkdir "$tmp/empty"
cat >"$tmp/hidden.sh" <<X
set -e
for d in ${hidden[*]}; do mount --bind "$tmp/empty" "\$d"; done
cd "$PWD"
ocamlfind query alcotest >/dev/null 2>&1 && { echo "alcotest still visible"; exit 3; }
exec "\$@"
X
unshare -m bash "$tmp/hidden.sh" dune build --build-dir "$tmp/_build" $targets >"$tmp/build.log" 2>&1
check $? "dune build $targets with the others out of reach" "$tmp/build.log"
[ -x "$tmp/_build/install/default/bin/httpz" ]
check $? "the httpz binary is built"
# The check can fail: a test needs a hidden package.
unshare -m bash "$tmp/hidden.sh" dune build --build-dir "$tmp/_build" ./test/lib/http/form/test_form.exe >"$tmp/neg.log" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q 'alcotest' "$tmp/neg.log"
check $? "there, a test executable does not build (alcotest is hidden)" "$tmp/neg.log"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
