#!/usr/bin/env bash
# lib/'s layers (lib/README.md) stay what the README says: each folder a
# dune library that lists only the layers below it (h1, h2 and ws never one
# another), with the release flags; lib/httpz.ml nothing but one alias per
# module; and the server's code compiled against the sub-libraries' .cmx
# (a real CRC, not the "-----" of a hidden or -opaque one), so ocamlopt can
# inline across them. Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../../.."
dune build @install 2>&1 | head -20
python3 - <<'PY'
import os, re, subprocess, sys
passed = failed = 0
def check(ok, what):
    global passed, failed
    print(("ok   " if ok else "FAIL ") + what)
    if ok: passed += 1
    else: failed += 1

layers = {"core": [], "http": ["core"], "h1": ["core"], "h2": ["core", "http"], "ws": ["core", "http"]}
prefix = {d: "Httpz_" + d for d in layers}
modules = {}
for d, below in layers.items():
    path = f"lib/{d}/dune"
    if not os.path.exists(path):
        check(False, f"{path} exists"); continue
    text = re.sub(r";[^\n]*", "", open(path).read())
    check(f"(name httpz_{d})" in text and f"(public_name httpz.{d})" in text,
          f"{path}: library httpz_{d}, public name httpz.{d}")
    m = re.search(r"\(libraries([^)]*)\)", text)
    libs = m.group(1).split() if m else []
    want = [f"httpz_{b}" for b in below]
    check(sorted(libs) == sorted(want), f"{path}: libraries {want} (found {libs})")
    check("-O3 -inline 200" in text and "-opaque" not in text, f"{path}: -O3 -inline 200, no -opaque")
    opens = re.findall(r"-open ([A-Za-z_]+)", text)
    check(sorted(opens) == sorted(prefix[b] for b in below), f"{path}: opens the layers below it ({opens})")
    modules[d] = sorted(f[:-3] for f in os.listdir(f"lib/{d}") if f.endswith(".ml"))
    check(all(os.path.exists(f"lib/{d}/{m}.mli") for m in modules[d]), f"lib/{d}: every module has its .mli")

# httpz.ml: exactly one alias per sub-library module, nothing else.
src = open("lib/httpz.ml").read() if os.path.exists("lib/httpz.ml") else "(missing)"
src = re.sub(r"\(\*.*?\*\)", "", src, flags=re.S)
aliases = re.findall(r"^module (\w+) = (\w+)\.(\w+)$", src, flags=re.M)
rest = re.sub(r"^module \w+ = \w+\.\w+$", "", src, flags=re.M).strip()
check(rest == "", "lib/httpz.ml holds only module aliases")
want = sorted((m.capitalize(), prefix[d], m.capitalize()) for d, ms in modules.items() for m in ms)
check(sorted(aliases) == want,
      f"lib/httpz.ml aliases each of the {len(want)} modules to its own library "
      f"(missing {sorted(set(want) - set(aliases))[:5]}, extra {sorted(set(aliases) - set(want))[:5]})")
check(not [f for f in os.listdir("lib") if f.endswith((".ml", ".mli", ".c")) and f != "httpz.ml"],
      "lib/ itself holds no module but httpz.ml")

# Inlining across libraries: the server's HTTP/1.1 machine was compiled
# with the .cmx of the modules it calls in hand.
cmx = "_build/default/server/.httpz_server.objs/native/httpz_server__H1.cmx"
out = subprocess.run(["ocamlobjinfo", cmx], capture_output=True, text=True).stdout
imp = out.split("Implementations imported:")[-1]
for unit in ["Httpz_http__Request", "Httpz_core__Bigstring", "Httpz_h1__Chunked"]:
    m = re.search(r"^\s*(\S+)\s+" + unit + r"$", imp, flags=re.M)
    check(bool(m) and re.fullmatch(r"[0-9a-f]{32}", m.group(1)) is not None,
          f"server H1 imports {unit}'s implementation with its CRC ({m.group(1) if m else 'absent'})")
# And an installed user gets them too.
for d, ms in modules.items():
    inst = f"_build/install/default/lib/httpz/{d}"
    have = set(os.listdir(inst)) if os.path.isdir(inst) else set()
    check(all(f"httpz_{d}__{m.capitalize()}.cmx" in have for m in ms), f"{inst}: every module's .cmx is installed")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
