(* Hello world: `hello.exe [PORT]` answers every request with a short text.

   The handler allocates nothing: the status, header and body are constants
   written into the connection's preallocated buffer. *)

open Httpz_server

let handler c =
  Ctx.start c Httpz.Status.Ok;
  Ctx.header c Httpz.Header_name.Content_type "text/plain";
  Ctx.body_string c "Hello, world!\n"

let () =
  let port = if Array.length Sys.argv > 1 then int_of_string Sys.argv.(1) else 8080 in
  (* The default config forks one worker per core. Fine here: the handler
     keeps no state. A handler that keeps some in memory (a counter, a
     session table) sets [workers = 1], or each worker has its own copy. *)
  exit (Server.run { Server.default_config with port } handler)
