#!/usr/bin/env bash
# Httpz.Multipart against Python's email package on generated bodies
# (test/lib/http/multipart/multipart_ref.py says what is generated and lists every
# deliberate disagreement). Needs the dune build (multipart_dump.exe).
set -u
cd "$(dirname "$0")/../../../.."
exec timeout 120 python3 test/lib/http/multipart/multipart_ref.py "$@"
