#!/usr/bin/env python3
"""Prints Header_name.of_token_words, the word-at-a-time recognition of known
field names, from the names in lib/core/header_name.ml's [to_string].

Usage: scripts/gen_header_names.py > /tmp/of_token.ml, then paste it over the
function in lib/core/header_name.ml. Each name of length L is compared as
ceil(L / 8) little-endian words of its lower-case bytes with 0x20 ORed in
(letters, digits and '-' already have it), bytes past L zero: exactly what
[lw] reads from the buffer, masked to L bytes. Words are printed as 63-bit
literals ([Int64.to_int] drops bit 63, which is clear for ASCII)."""
import os
import re

here = os.path.dirname(os.path.abspath(__file__))
src = open(os.path.join(here, "..", "lib", "core", "header_name.ml")).read()
body = src[src.index("let to_string"):src.index("let all")]
pairs = [(c, s) for c, s in re.findall(r'\| (\w+) -> "([^"]+)"', body) if c != "Other"]


def word(s, k):
    w = 0
    for j in range(7, -1, -1):
        i = 8 * k + j
        w = (w << 8) | ((ord(s[i]) | 0x20) if i < len(s) else 0)
    return w & ((1 << 63) - 1)


def mask(rem):
    return "" if rem >= 8 else " land 0x%x" % ((1 << (8 * rem)) - 1)


by_len = {}
for c, s in pairs:
    by_len.setdefault(len(s), []).append((c, s.lower()))
out = ["let of_token_words b off len =", "  match len with"]
for n in sorted(by_len):
    out.append("  | %d ->" % n)
    out.append("    let w0 = lw b (off + 0)%s in" % mask(n))
    for i, (c, s) in enumerate(by_len[n]):
        conds = ["w0 = 0x%x" % word(s, 0)]
        for k in range(1, (n + 7) // 8):
            conds.append("lw b (off + %d)%s = 0x%x" % (8 * k, mask(n - 8 * k), word(s, k)))
        out.append("    %sif %s then %s" % ("else " if i else "", " && ".join(conds), c))
    out.append("    else Other")
out.append("  | _ -> Other")
print("\n".join(out))
