(* The httpz side of the routed-JSON benchmark case (todos_c64 in
   bench_servers.py): GET /todos/:id answers the todo as JSON, 404 JSON
   when there is none, on one worker.

   Two ways to reach the same handler, to show what the router costs:
   - default: Route (Httpz.Router's segment trie) with Route.param;
   - --hand-match: a hand-written match on the method and the "/todos/"
     prefix, as a program without a router would do it.
   Both look the id up in the same table of ready-made JSON bodies and
   answer with Respond.json, so the difference between the two is the
   routing. The cohttp peer (cohttp_todos.ml) serves the same table (Todos_table).

   Usage: todos_httpz -p PORT [--host 127.0.0.1] [--hand-match] *)

open Httpz
open Httpz_server

let not_found = Todos_table.not_found

let show c id =
  match Todos_table.find id with
  | Some body -> Respond.json c body
  | None -> Respond.json c ~status:Status.Not_found not_found

let routed () =
  let r = Route.router () in
  Route.get r "/todos/:id" (fun c -> show c (Route.param c "id"));
  Route.handler (Route.compile r)

(* The same answer without the router: split the target, check the method
   and the prefix, take the rest as the id (ids are digits, so there is
   nothing to percent-decode; a '/' or '%' in it is no todo). *)
let prefix = "/todos/"

let hand_match () =
  let target = Target.create () in
  fun c ->
    let buf = Ctx.buffer c and req = Ctx.request c in
    match Target.split target buf (Request.target req) with
    | Target.Origin when Request.meth req = Meth.Get ->
        let path = Target.path target in
        let off = Span.off path and len = Span.len path and n = String.length prefix in
        if len > n && Span.equal buf (Span.make ~off ~len:n) prefix then begin
          let id = Bigstring.sub_string buf ~off:(off + n) ~len:(len - n) in
          if String.contains id '/' || String.contains id '%' then
            Respond.json c ~status:Status.Not_found not_found
          else show c id
        end
        else Respond.json c ~status:Status.Not_found not_found
    | Target.Origin -> Respond.error c Status.Method_not_allowed
    | Target.Absolute | Target.Asterisk | Target.Error -> Respond.error c Status.Bad_request

let () =
  let port = ref 8080 and host = ref "127.0.0.1" and hand = ref false in
  Arg.parse
    [ ("-p", Arg.Set_int port, "PORT port to listen on");
      ("--host", Arg.Set_string host, "ADDR address to bind (127.0.0.1)");
      ("--hand-match", Arg.Set hand, " route with a hand-written match instead of Route") ]
    (fun a -> raise (Arg.Bad ("unexpected argument " ^ a)))
    "todos_httpz -p PORT [--host ADDR] [--hand-match]";
  let handler = if !hand then hand_match () else routed () in
  (* One worker, as every server of the benchmark gets (and the table would
     be per process with more). *)
  exit (Server.run { Server.default_config with port = !port; host = !host; workers = 1 } handler)
