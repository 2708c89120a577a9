#!/usr/bin/env bash
# What users run is what is tested and benchmarked: the release build.
# dune's dev profile compiles every module with -opaque (no inlining across
# modules: about a third more instructions per request), and a dev build
# leaves its mark in each .cmx: the modules it imports carry no checksum
# ("----" in ocamlobjinfo), since nothing of theirs was inlined. Checked on
# what `make build` builds with its own command (the installed libraries
# and the httpz binary's modules), on the Makefile's targets (no other
# profile than the tree's), and on a small project with this tree's
# dune-workspace and root dune file: the check tells the profiles apart, and
# a warning still fails the build. Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../../.."
tmp=$(mktemp -d /tmp/httpz-profile.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
check() { # rc name [detail file]
  if [ "$1" -eq 0 ]; then echo "ok   $2"; passed=$((passed + 1))
  else echo "FAIL $2"; [ -n "${3:-}" ] && tail -20 "$3"; failed=$((failed + 1)); fi
}

# The imports of [cmx] compiled against another module's .cmx, and those
# compiled without (opaque), among the modules whose name matches [re].
imports() { # cmx re -> "with without"
  ocamlobjinfo "$1" | sed -n '/^Implementations imported:/,/^[^\t]/p' | grep -E "	($2)" |
    awk '{ if ($1 ~ /^-+$/) n++; else y++ } END { printf "%d %d\n", y, n }'
}

# `make build`'s command, as the Makefile spells it (no DUNE_PROFILE from
# the caller's environment either).
targets=$(sed -n 's/^BUILD_TARGETS *= *//p' Makefile)
env -u DUNE_PROFILE dune build $targets >"$tmp/build.log" 2>&1
check $? "dune build $targets" "$tmp/build.log"

# Every .cmx `dune install` ships, and the httpz binary's own modules.
total_with=0; total_without=0; bad=""
for cmx in $(find _build/install/default/lib _build/default/bin/.main.eobjs/native -name '*.cmx'); do
  read -r y n <<<"$(imports "$cmx" 'Httpz|Dune__exe')"
  total_with=$((total_with + y)); total_without=$((total_without + n))
  [ "$n" -eq 0 ] || bad="$bad $cmx"
done
[ "$total_without" -eq 0 ] && [ "$total_with" -gt 100 ]
check $? "the shipped build inlines across its modules ($total_with imports with a .cmx, $total_without opaque${bad:+:$bad})"

# No target builds another profile than the one `make serve` runs.
for t in build serve test bench bench-quick bench-h2-floor soak; do
  make -n "$t" 2>/dev/null | grep -E '(^|[ /])dune ' >"$tmp/cmds"
  ! grep -qE -- '--profile|--release|DUNE_PROFILE' "$tmp/cmds" && [ -s "$tmp/cmds" ]
  check $? "make $t builds with the tree's profile" "$tmp/cmds"
done

# The same files in a project of two modules: B uses A.
mkdir -p "$tmp/p"
cp dune-workspace dune "$tmp/p/"
cat >"$tmp/p/dune-project" <<'X'
(lang dune 2.9)
X
mkdir "$tmp/p/src"
cat >"$tmp/p/src/dune" <<'X'
(library (name pl))
X
echo 'let twice x = x + x' >"$tmp/p/src/a.ml"
echo 'let quad x = A.twice (A.twice x)' >"$tmp/p/src/b.ml"
b_cmx="src/.pl.objs/native/pl__B.cmx"
(cd "$tmp/p" && env -u DUNE_PROFILE dune build --root . "./$b_cmx") >"$tmp/p.log" 2>&1
check $? "a small project with this dune-workspace builds" "$tmp/p.log"
[ "$(imports "$tmp/p/_build/default/$b_cmx" 'Pl__A')" = "1 0" ]
check $? "there, by default, B is compiled against A's .cmx"
(cd "$tmp/p" && env -u DUNE_PROFILE dune build --root . --build-dir _dev --profile dev "./$b_cmx") >"$tmp/dev.log" 2>&1
[ "$(imports "$tmp/p/_dev/default/$b_cmx" 'Pl__A')" = "0 1" ]
check $? "with --profile dev, B is opaque to A (the check can fail)" "$tmp/dev.log"
# Warning 26 (unused variable), an error in the dev profile, is one still.
echo 'let f x = let unused = x in x' >"$tmp/p/src/a.ml"
(cd "$tmp/p" && env -u DUNE_PROFILE dune build --root . "./$b_cmx") >"$tmp/warn.log" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q 'Error (warning 26' "$tmp/warn.log"
check $? "a warning fails the default build" "$tmp/warn.log"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
