#!/usr/bin/env bash
# The protocol modules are sans I/O (issue 35): HTTP/1.1 (h1*.ml), HTTP/2
# (h2_*.ml) and WebSocket (ws*.ml) under server/ return what to do
# (Conn_action, Output's description) and never call the system or
# OpenSSL themselves. This fails when one of them names Unix, Syscall or
# Openssl (a call, an open, an alias), comments and string literals aside.
#
# No exception: a protocol tells a plain connection from a TLS one by
# Slot.t's [tls], which the transport reports.
#
# One result per module checked; ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
files=$(find server -name 'h1*.ml' -o -name 'h2_*.ml' -o -name 'ws*.ml' | sort)
if [ -z "$files" ]; then
  echo "protocol_io: no protocol module found under server/"
  echo "0 passed, 1 failed"
  exit 1
fi
# shellcheck disable=SC2086
python3 - $files <<'EOF'
import re, sys

def strip(src):
    """OCaml source with comments (nested) and string literals blanked,
    newlines kept so that line numbers stay true."""
    out, i, n, depth = [], 0, len(src), 0
    while i < n:
        ch = src[i]
        if src.startswith("(*", i):
            depth += 1; out.append("  "); i += 2; continue
        if depth > 0:
            if src.startswith("*)", i):
                depth -= 1; out.append("  "); i += 2; continue
            if ch == '"':  # a string inside a comment still ends nothing
                j = i + 1
                while j < n and src[j] != '"':
                    j += 2 if src[j] == "\\" else 1
                out.append(re.sub(r"[^\n]", " ", src[i:j + 1])); i = j + 1; continue
            out.append("\n" if ch == "\n" else " "); i += 1; continue
        if ch == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", src[i:j + 1])); i = j + 1; continue
        if ch == "'" and re.match(r"'(\\.[^']*|[^\\'])'", src[i:]):  # a char literal: '"'
            m = re.match(r"'(\\.[^']*|[^\\'])'", src[i:])
            out.append(" " * len(m.group(0))); i += len(m.group(0)); continue
        m = re.match(r"\{([a-z_]*)\|", src[i:])  # a quoted string {id|...|id}
        if m:
            end = src.find("|" + m.group(1) + "}", i + len(m.group(0)))
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", src[i:end])); i = end; continue
        out.append(ch); i += 1
    return "".join(out)

# A module path through Unix, Syscall or Openssl (Unix.x, Syscall.X.y),
# or the module itself opened, included or aliased.
use = re.compile(r"\b(Unix|Syscall|Openssl)\s*\.\s*([A-Za-z_][A-Za-z0-9_']*)")
whole = re.compile(r"\b(open!?|include|module\s+[A-Z][A-Za-z0-9_']*\s*=)\s*(Unix|Syscall|Openssl)\b")
allowed = set()

passed = failed = 0
for path in sys.argv[1:]:
    text = strip(open(path, encoding="utf-8").read())
    lines = open(path, encoding="utf-8").read().split("\n")
    bad = []
    for no, line in enumerate(text.split("\n"), 1):
        for m in use.finditer(line):
            if (m.group(1), m.group(2)) not in allowed:
                bad.append((no, m.group(0)))
        for m in whole.finditer(line):
            bad.append((no, m.group(0)))
    if bad:
        failed += 1
        print("FAIL %s:" % path)
        for no, what in bad:
            print("  %s:%d: %s   | %s" % (path, no, what, lines[no - 1].strip()))
    else:
        passed += 1
        print("ok   %s" % path)
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
EOF
