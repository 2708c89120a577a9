#!/usr/bin/env bash
# The README's OCaml example must be the compiled example, word for word (no
# prose that nothing executes), and every `make` target it names must exist.
set -u
cd "$(dirname "$0")/../../.."
pass=0; fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
ko() { echo "FAIL $1"; fail=$((fail + 1)); }

example=$(awk '/^```ocaml$/{f=1; next} /^```$/{if (f) exit} f' README.md)
if [ "$example" = "$(cat examples/quickstart/quickstart.ml)" ]; then ok "README example = examples/quickstart/quickstart.ml"
else ko "README example differs from examples/quickstart/quickstart.ml"; fi

# Every other OCaml block must be a verbatim excerpt of the example file the
# README names just before it.
python3 - <<'PY' || fail=$((fail + 1))
import re, sys
readme = open("README.md").read()
blocks = list(re.finditer(r"```ocaml\n(.*?)```", readme, re.S))
bad = 0
for m in blocks[1:]:
    before = readme[:m.start()]
    names = re.findall(r"`(examples/[A-Za-z0-9_/.-]+\.ml)`", before)
    if not names:
        print("FAIL an OCaml block names no example file before it"); bad += 1; continue
    src = open(names[-1]).read()
    if m.group(1) in src: print("ok   README block is an excerpt of " + names[-1])
    else: print("FAIL README block is not an excerpt of " + names[-1]); bad += 1
sys.exit(1 if bad else 0)
PY
[ $? -eq 0 ] && pass=$((pass + 1))

for target in $(grep -oE 'make [a-z0-9-]+' README.md | awk '{print $2}' | sort -u); do
  if grep -qE "^$target:" Makefile; then ok "make $target exists"; else ko "README names 'make $target', Makefile lacks it"; fi
done
for path in $(grep -oE '`(lib|sys|server|static|lwt|bin|bench|test|examples|scripts)/[A-Za-z0-9_./-]+`' README.md | tr -d '`' | sort -u); do
  case "$path" in *results*) continue ;; esac
  if [ -e "$path" ]; then ok "path $path exists"; else ko "README names $path, which does not exist"; fi
done
# The app's size the README states is the one scripts/code_lines.py counts.
lines=$(python3 scripts/code_lines.py examples/todo_app.ml examples/app.ml | awk '/ total$/ {print $1}')
if grep -q "in $lines"$'$' README.md && grep -A1 "in $lines$" README.md | grep -q "non-blank lines of code"; then ok "README: the app is $lines code lines"
else ko "README's app line count is not scripts/code_lines.py's ($lines)"; fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
