#!/usr/bin/env bash
# Builds picohttpparser with SSE4.2, the hard peer of Httpz.Request.parse,
# from C source fetched at bench time (never committed), and prints the
# path of the shared library it built.
#
# Usage: bench/parse/pico_sse42.sh DIR
#   Downloads the sdist of PyPI's pypicohp 0.1.3 (it vendors picohttpparser.c
#   at upstream commit 066d2b1e) with pip, pinned by its sha256, checks the C
#   file's own sha256, compiles it with -O3 -msse4.2 into
#   DIR/libpicohttpparser_sse42.so and checks that the SSE4.2 string
#   instruction (pcmpestri) is in the result, i.e. that the fast path was
#   compiled in. Debian's build (libh2o-evloop-dev) has no pcmpestri.
#   Prints the library's path on stdout; on any failure says why on stderr
#   and exits non-zero (bench/run.sh then runs without that column).
set -euo pipefail

dir=${1:?usage: $0 DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
lib=$dir/libpicohttpparser_sse42.so

say() { echo "pico_sse42.sh: $*" >&2; }

grep -qw sse4_2 /proc/cpuinfo || { say "this CPU has no SSE4.2"; exit 1; }
# Debian's python3-pip (scripts/deps.sh bench); `pip download` installs nothing.
pip=(python3 -m pip)
[ -x /usr/bin/python3 ] && pip=(/usr/bin/python3 -m pip)
"${pip[@]}" --version >/dev/null 2>&1 || { say "pip is not installed (scripts/deps.sh bench)"; exit 1; }

sdist_sha=4d3899f8530557b71dd4bd3198c11d5584bc1e53ee1b5bfa727afb81a635b5b3
c_sha=926f3c009724e94e7cbe26e00148a2010942832952cd9c18e6973692b30b9fa6
h_sha=ac284ab81de872aa4354b6039f6ac02b771c176948bb83295fc8bd67b5fec183

if [ ! -f "$dir/pypicohp-0.1.3.tar.gz" ]; then
  printf 'pypicohp==0.1.3 --hash=sha256:%s\n' "$sdist_sha" >"$dir/requirements.txt"
  # 20 s: a normal download takes 2-4 s, and make bench has a time budget.
  if ! timeout 20 "${pip[@]}" download --quiet --disable-pip-version-check --no-deps \
       --no-binary :all: --require-hashes -r "$dir/requirements.txt" -d "$dir" >&2; then
    say "download of pypicohp 0.1.3 from PyPI failed"
    exit 1
  fi
fi
echo "$sdist_sha  $dir/pypicohp-0.1.3.tar.gz" | sha256sum -c --quiet - >&2 \
  || { say "pypicohp-0.1.3.tar.gz does not have the pinned sha256"; exit 1; }
rm -rf "$dir/src"
mkdir "$dir/src"
tar -xzf "$dir/pypicohp-0.1.3.tar.gz" -C "$dir/src" --strip-components=2 \
  pypicohp-0.1.3/pypicohp/picohttpparser.c pypicohp-0.1.3/pypicohp/picohttpparser.h
printf '%s  %s\n%s  %s\n' "$c_sha" "$dir/src/picohttpparser.c" "$h_sha" "$dir/src/picohttpparser.h" \
  | sha256sum -c --quiet - >&2 || { say "picohttpparser.c/.h do not have the pinned sha256"; exit 1; }

# -Bsymbolic: the library's own calls stay inside it even when Debian's
# build, with the same symbol names, is loaded into the same process.
${CC:-cc} -O3 -msse4.2 -fPIC -shared -Wl,-Bsymbolic -o "$lib" "$dir/src/picohttpparser.c"
# (grep -c reads everything: with -q, objdump's SIGPIPE would fail the pipe.)
[ "$(objdump -d "$lib" | grep -c pcmpestri)" -gt 0 ] \
  || { say "$lib has no pcmpestri: the SSE4.2 path was not compiled in"; exit 1; }
echo "$lib"
