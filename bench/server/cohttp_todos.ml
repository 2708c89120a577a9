(* The cohttp-lwt-unix peer of the routed-JSON benchmark case (todos_c64 in
   bench_servers.py): GET /todos/:id answers the todo as JSON, 404 JSON
   when there is none, from the same table as todos_httpz.ml, routed the
   way a cohttp program does it (a match on the method and the path split
   on '/'), answered with [Cohttp_lwt_unix.Server.respond_string].

   Usage: cohttp_todos -p PORT [--host 127.0.0.1] *)

open Lwt.Infix

let todos : (string, string) Hashtbl.t = Hashtbl.create 1024

let () =
  for i = 1 to 1000 do
    let id = string_of_int i in
    Hashtbl.replace todos id (Printf.sprintf {|{"id":%s,"title":"todo number %s","done":false}|} id id)
  done

let json_headers = Cohttp.Header.init_with "content-type" "application/json"

let json status body = Cohttp_lwt_unix.Server.respond_string ~headers:json_headers ~status ~body ()

let not_found = {|{"error":"no such todo"}|}

let callback _conn req _body =
  match Cohttp.Request.meth req, String.split_on_char '/' (Uri.path (Cohttp.Request.uri req)) with
  | `GET, [ ""; "todos"; id ] when id <> "" -> (
      match Hashtbl.find_opt todos id with
      | Some body -> json `OK body
      | None -> json `Not_found not_found)
  | `GET, _ -> json `Not_found not_found
  | _ -> Cohttp_lwt_unix.Server.respond_string ~status:`Method_not_allowed ~body:"" ()

let () =
  let port = ref 8080 and host = ref "127.0.0.1" in
  Arg.parse
    [ ("-p", Arg.Set_int port, "PORT port to listen on");
      ("--host", Arg.Set_string host, "ADDR address to bind (127.0.0.1)") ]
    (fun a -> raise (Arg.Bad ("unexpected argument " ^ a)))
    "cohttp_todos -p PORT [--host ADDR]";
  Sys.set_signal Sys.sigpipe Sys.Signal_ignore;
  (* Bound here, on loopback only, as cohttp_static.ml does. *)
  let fd = Lwt_unix.socket Unix.PF_INET Unix.SOCK_STREAM 0 in
  Lwt_unix.setsockopt fd Unix.SO_REUSEADDR true;
  let addr = Unix.ADDR_INET (Unix.inet_addr_of_string !host, !port) in
  let main =
    Lwt_unix.bind fd addr >>= fun () ->
    Lwt_unix.listen fd 4096;
    Cohttp_lwt_unix.Server.create ~on_exn:(fun _ -> ()) ~mode:(`TCP (`Socket fd))
      (Cohttp_lwt_unix.Server.make ~callback ())
  in
  Lwt_main.run main
