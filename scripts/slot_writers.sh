#!/usr/bin/env bash
# Which modules of server/ assign fields of the connection slot record
# (the mutable fields of `type t` in server/slot.mli), and how often:
# the measure of who owns the slot's state (issue 21).
set -euo pipefail
cd "$(dirname "$0")/.."
mli=${1:-server/slot.mli}
fields=$(awk '/^and t = \{/{f=1} f&&/^\}/{exit} f' "$mli" | grep -oE 'mutable [a-z_]+' | awk '{print $2}' | sort -u)
pattern=$(echo "$fields" | paste -sd'|')
total=0; modules=0
for f in server/*.ml; do
  n=$(grep -cE "\bc\.($pattern) <-" "$f" || true)
  if [ "$n" -gt 0 ]; then printf '%-28s %4d\n' "$f" "$n"; total=$((total + n)); modules=$((modules + 1)); fi
done
echo "$modules modules write slot fields, $total assignments"
