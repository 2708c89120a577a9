(* The cohttp-lwt-unix peer of the routed-JSON benchmark case (todos_c64 in
   bench_servers.py): GET /todos/:id answers the todo as JSON, 404 JSON
   when there is none, from the same table as todos_httpz.ml (Todos_table), routed the
   way a cohttp program does it (a match on the method and the path split
   on '/'), answered with [Cohttp_lwt_unix.Server.respond_string].

   Usage: cohttp_todos -p PORT [--host 127.0.0.1] *)

let json_headers = Cohttp.Header.init_with "content-type" "application/json"

let json status body = Cohttp_lwt_unix.Server.respond_string ~headers:json_headers ~status ~body ()

let callback _conn req _body =
  match Cohttp.Request.meth req, String.split_on_char '/' (Uri.path (Cohttp.Request.uri req)) with
  | `GET, [ ""; "todos"; id ] when id <> "" -> (
      match Todos_table.find id with
      | Some body -> json `OK body
      | None -> json `Not_found Todos_table.not_found)
  | `GET, _ -> json `Not_found Todos_table.not_found
  | _ -> Cohttp_lwt_unix.Server.respond_string ~status:`Method_not_allowed ~body:"" ()

let () =
  let port = ref 8080 and host = ref "127.0.0.1" in
  Arg.parse
    [ ("-p", Arg.Set_int port, "PORT port to listen on");
      ("--host", Arg.Set_string host, "ADDR address to bind (127.0.0.1)") ]
    (fun a -> raise (Arg.Bad ("unexpected argument " ^ a)))
    "cohttp_todos -p PORT [--host ADDR]";
  Cohttp_loopback.serve ~host:!host ~port:!port callback
