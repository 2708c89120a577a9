#!/usr/bin/env bash
# The libraries as another project uses them: `dune install` into a
# temporary prefix, then a small project outside the tree that depends on
# httpz, httpz.server and httpz.lwt (found through OCAMLPATH, as the README
# says) is built and run, and answers a request; then examples/hello.ml is
# built as bytecode and run with CAML_LD_LIBRARY_PATH at the installed
# stublibs, the README's command. So "Use httpz in your project" cannot
# rot. Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../../.."
tmp=$(mktemp -d /tmp/httpz-install.XXXXXX)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
passed=0; failed=0
check() { # rc name [detail file]
  if [ "$1" -eq 0 ]; then echo "ok   $2"; passed=$((passed + 1))
  else echo "FAIL $2"; [ -n "${3:-}" ] && tail -20 "$3"; failed=$((failed + 1)); fi
}

dune build @install >"$tmp/build.log" 2>&1
check $? "dune build @install" "$tmp/build.log"
dune install --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1
check $? "dune install --prefix (temporary)" "$tmp/install.log"
test -f "$tmp/prefix/lib/httpz/META"
check $? "META installed"

mkdir -p "$tmp/app"
cat >"$tmp/app/dune-project" <<'X'
(lang dune 2.9)
X
cat >"$tmp/app/dune" <<'X'
(executable
 (name app)
 (modules app)
 (libraries httpz httpz.server httpz.lwt lwt.unix))

(executable
 (name hello)
 (modules hello)
 (modes byte)
 (libraries httpz.server))
X
cp examples/hello.ml "$tmp/app/hello.ml"
cat >"$tmp/app/app.ml" <<'X'
(* A project outside httpz's tree: a handler that answers at once, and one
   that waits for an Lwt promise. *)
open Httpz
open Httpz_server

let handler c =
  let buf = Ctx.buffer c and t = Request.target (Ctx.request c) in
  if Span.equal buf t "/lwt" then
    Httpz_lwt.await c (Lwt_unix.sleep 0.05) (fun () c ->
        Ctx.start c Status.Ok;
        Ctx.body_string c "lwt ok\n")
  else begin
    Ctx.start c Status.Ok;
    Ctx.header c Header_name.Content_type "text/plain";
    Ctx.body_string c "outside ok\n"
  end

let () =
  let port = int_of_string Sys.argv.(1) in
  exit (Server.run { Server.default_config with port; workers = 1 } handler)
X
(cd "$tmp/app" && OCAMLPATH="$tmp/prefix/lib${OCAMLPATH:+:$OCAMLPATH}" dune build ./app.exe) >"$tmp/app.log" 2>&1
check $? "an outside project builds against the installed libraries" "$tmp/app.log"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$tmp/app/_build/default/app.exe" "$port" 2>"$tmp/run.log" &
pid=$!
ok=1
for _ in $(seq 50); do
  if out=$(curl -s --max-time 2 "http://127.0.0.1:$port/"); then ok=0; break; fi
  sleep 0.1
done
[ $ok -eq 0 ] && [ "$out" = "outside ok" ]
check $? "it serves (got: ${out:-nothing})" "$tmp/run.log"
out=$(curl -s --max-time 2 "http://127.0.0.1:$port/lwt")
[ "$out" = "lwt ok" ]
check $? "its Lwt handler answers (got: ${out:-nothing})" "$tmp/run.log"
kill "$pid"; wait "$pid" 2>/dev/null; pid=""

# Bytecode: ocamlc and ocamlrun load the C stubs (dllhttpz_*.so) from the
# installed stublibs directory, which only CAML_LD_LIBRARY_PATH names.
stublibs="$tmp/prefix/lib/stublibs"
(cd "$tmp/app" && OCAMLPATH="$tmp/prefix/lib${OCAMLPATH:+:$OCAMLPATH}" \
  CAML_LD_LIBRARY_PATH="$stublibs${CAML_LD_LIBRARY_PATH:+:$CAML_LD_LIBRARY_PATH}" \
  dune build ./hello.bc) >"$tmp/bc.log" 2>&1
check $? "examples/hello.ml builds as bytecode with CAML_LD_LIBRARY_PATH" "$tmp/bc.log"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
CAML_LD_LIBRARY_PATH="$stublibs${CAML_LD_LIBRARY_PATH:+:$CAML_LD_LIBRARY_PATH}" \
  "$tmp/app/_build/default/hello.bc" "$port" 2>"$tmp/bc-run.log" &
pid=$!
out=""
for _ in $(seq 50); do
  if out=$(curl -s --max-time 2 "http://127.0.0.1:$port/"); then break; fi
  sleep 0.1
done
[ "$out" = "Hello, world!" ]
check $? "the bytecode program serves (got: ${out:-nothing})" "$tmp/bc-run.log"
kill "$pid"; wait "$pid" 2>/dev/null; pid=""

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
