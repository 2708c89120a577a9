(* examples/todo_app.ml served: HTTPS (or plain HTTP) on -p PORT, plain
   HTTP beside it on --plain-port, errors as JSON, one worker (the todos
   and memory sessions live in this process).
   app.exe -p PORT [-d ASSETS_DIR] [--uploads DIR] [--tls-cert F --tls-key F [--plain-port P]]
           [--io uring|epoll] [--memory-sessions [--max-sessions N]] *)

open Httpz_server

let () =
  let port = ref 8080 and plain = ref 0 and dir = ref "." and uploads = ref (Filename.get_temp_dir_name ()) in
  let cert = ref "" and key = ref "" and io = ref Server.default_config.io and memory = ref false and max = ref 100_000 in
  Arg.parse
    [ ("-p", Arg.Set_int port, "PORT"); ("--plain-port", Arg.Set_int plain, "PORT"); ("-d", Arg.Set_string dir, "DIR");
      ("--uploads", Arg.Set_string uploads, "DIR"); ("--tls-cert", Arg.Set_string cert, "F"); ("--tls-key", Arg.Set_string key, "F");
      ("--io", Arg.Symbol ([ "uring"; "epoll" ], fun s -> io := if s = "epoll" then Epoll else Uring), "");
      ("--memory-sessions", Arg.Set memory, ""); ("--max-sessions", Arg.Set_int max, "N") ] ignore "app.exe [options]";
  let plain = if !plain > 0 then [ ("127.0.0.1", !plain) ] else [] in
  let tls = if !cert = "" then None else Some { (Server.tls ~cert_file:!cert ~key_file:!key) with listen_plain = plain } in
  (* A fresh key per start: a real application reads its keys from a secret store. *)
  let store = if !memory then Session.memory ~max_sessions:!max () else Session.signed ~keys:[ Httpz_sys.Entropy.bytes 32 ] () in
  match Httpz_static.Static.create { Httpz_static.Static.default_config with root = !dir } with
  | Error e -> prerr_endline ("app: " ^ e); exit 1
  | Ok assets ->
      let config = { Server.default_config with port = !port; workers = 1; tls; io = !io; errors = Some Errors.json } in
      exit (Server.run config (Todo_app.handler ~store ~assets ~uploads:!uploads))
