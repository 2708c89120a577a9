#!/usr/bin/env bash
# The protocols do not know one another (issue 35): only the protocol
# switch (server/connection.ml) names more than one of them.
#  - HTTP/1.1 (server/h1*.ml, .mli) names no HTTP/2 module of the server
#    (H2_session, H2_exchange, H2_response) and no WebSocket one (Ws*);
#  - WebSocket (server/ws*.ml, .mli) names no H1, H1_response, H2_*;
#  - HTTP/2 (server/h2_*.ml, .mli) names no H1, H1_response, Ws*.
# What a file names is what `ocamldep -modules` finds in it (the compiler's
# own lexer and parser: comments and strings do not count, a qualified
# path counts by its first module); with a build, the interfaces each
# module's .cmt imported are checked too, which sees through aliases.
# One check per file (and per .cmt); ends with "N passed, N failed" and
# fails on any violation. [$1]: the checkout to check (default: this one).
set -uo pipefail
cd "${1:-$(dirname "$0")/..}" || exit 1
passed=0; failed=0

h1_forbidden='^(H2_session|H2_exchange|H2_response|Ws[A-Za-z0-9_]*)$'
ws_forbidden='^(H1|H1_response|H2_[A-Za-z0-9_]*)$'
h2_forbidden='^(H1|H1_response|Ws[A-Za-z0-9_]*)$'

forbidden_for() { # file or module name (lowercase) -> pattern
  case "$1" in
    h1 | h1_*) echo "$h1_forbidden" ;;
    ws | ws_*) echo "$ws_forbidden" ;;
    h2_*) echo "$h2_forbidden" ;;
  esac
}

verdict() { # what, names found (one a line), pattern
  local bad
  bad=$(printf '%s\n' "$2" | grep -E "$3" | sort -u | paste -sd' ' -)
  if [ -n "$bad" ]; then
    echo "FAIL $1 names $bad"
    failed=$((failed + 1))
  else
    passed=$((passed + 1))
  fi
}

for f in server/h1*.ml server/h1*.mli server/ws*.ml server/ws*.mli server/h2_*.ml server/h2_*.mli; do
  [ -f "$f" ] || continue
  base=$(basename "$f"); base=${base%.*}
  if ! out=$(ocamldep -modules "$f" 2>&1); then
    echo "FAIL $f: ocamldep: $out"
    failed=$((failed + 1))
    continue
  fi
  # "file: A B C"; a path through the library's wrapper counts as its module.
  names=$(echo "${out#*:}" | tr ' ' '\n' | sed -e '/^$/d' -e 's/^Httpz_server__//')
  verdict "$f" "$names" "$(forbidden_for "$base")"
done

objs=_build/default/server/.httpz_server.objs/byte
if [ -d "$objs" ] && command -v ocamlobjinfo >/dev/null; then
  for cmt in "$objs"/httpz_server__H1*.cmt "$objs"/httpz_server__Ws*.cmt "$objs"/httpz_server__H2_*.cmt; do
    [ -f "$cmt" ] || continue
    unit=$(basename "$cmt" .cmt); unit=${unit#httpz_server__}
    # Skip a .cmt whose source is gone (a stale build).
    ls server/"$(echo "$unit" | tr 'A-Z' 'a-z')".ml >/dev/null 2>&1 || continue
    names=$(ocamlobjinfo "$cmt" | grep -oE 'Httpz_server__[A-Za-z0-9_]+$' | sed 's/^Httpz_server__//' | grep -vx "$unit")
    verdict "$cmt" "$names" "$(forbidden_for "$(echo "$unit" | tr 'A-Z' 'a-z')")"
  done
fi

# Nothing checked is no pass: the files moved, and this script must follow.
if [ "$passed" -eq 0 ]; then echo "FAIL no protocol module found under server/"; failed=$((failed + 1)); fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
