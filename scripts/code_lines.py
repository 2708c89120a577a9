#!/usr/bin/env python3
"""Non-blank lines of OCaml code in the files given, comments left out
((* ... *), nested; strings are not looked into, which the examples'
comments do not need). Prints one line per file and the total:
    python3 scripts/code_lines.py examples/todo_app.ml examples/app.ml"""
import sys


def code_lines(text):
    out, depth, i = [], 0, 0
    while i < len(text):
        if text.startswith("(*", i):
            depth, i = depth + 1, i + 2
        elif depth and text.startswith("*)", i):
            depth, i = depth - 1, i + 2
        else:
            if not depth or text[i] == "\n":
                out.append(text[i])
            i += 1
    return sum(1 for line in "".join(out).splitlines() if line.strip())


total = 0
for path in sys.argv[1:]:
    with open(path) as f:
        n = code_lines(f.read())
    total += n
    print("%5d %s" % (n, path))
print("%5d total" % total)
