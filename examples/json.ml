(* A small JSON API: `json.exe [PORT]`.

   GET  /time  -> {"now": <Unix seconds>}
   POST /echo  -> {"length": <bytes in the request body>}
   anything else: 404, or 405 for a known path with the wrong method.

   The JSON is built in a per-process scratch buffer with the allocation-free
   writers of [Httpz.Response] and sent with [Ctx.body_bigstring] (which
   copies it before the next request can touch the scratch buffer), so the
   handler allocates nothing per request. *)

open Httpz
open Httpz_server

let scratch = Bigstring.create 64

(* Writes [prefix ^ digits n ^ "}\n"] into [scratch]; its length. *)
let json_int prefix n =
  let pos = Response.write_string scratch ~off:0 prefix in
  let pos = Response.write_int scratch ~off:pos n in
  Response.write_string scratch ~off:pos "}\n"

let send_json c status len =
  Ctx.start c status;
  Ctx.header c Header_name.Content_type "application/json";
  Ctx.body_bigstring c scratch ~off:0 ~len

let not_found c =
  Ctx.start c Status.Not_found;
  Ctx.header c Header_name.Content_type "application/json";
  Ctx.body_string c "{\"error\": \"not found\"}\n"

let method_not_allowed c allow =
  Ctx.start c Status.Method_not_allowed;
  Ctx.header c Header_name.Allow allow;
  Ctx.header c Header_name.Content_type "application/json";
  Ctx.body_string c "{\"error\": \"method not allowed\"}\n"

let handler c =
  let req = Ctx.request c in
  let buf = Ctx.buffer c in
  let target = Request.target req in
  if Span.equal buf target "/time" then begin
    match Request.meth req with
    | Meth.Get | Meth.Head -> send_json c Status.Ok (json_int "{\"now\": " (Ctx.now c))
    | _ -> method_not_allowed c "GET, HEAD"
  end
  else if Span.equal buf target "/echo" then begin
    match Request.meth req with
    | Meth.Post ->
        (* The body is read only on request: the handler is called again
           once it is here. *)
        if Ctx.body_ready c then
          send_json c Status.Ok (json_int "{\"length\": " (Span.len (Ctx.body c)))
        else Ctx.await_body c
    | _ -> method_not_allowed c "POST"
  end
  else not_found c

let () =
  let port = if Array.length Sys.argv > 1 then int_of_string Sys.argv.(1) else 8080 in
  exit (Server.run { Server.default_config with port } handler)
