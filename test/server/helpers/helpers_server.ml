(* test/e2e/test_helpers.py's server: Helpers_app on one worker, with the
   transport options of `httpz serve` and a stats token. *)

open Httpz_server

let () =
  let port = ref 8080 and dir = ref "." and cert = ref "" and key = ref "" and io = ref Server.default_config.io
  and stats = ref "" in
  Arg.parse
    [ ("-p", Arg.Set_int port, "PORT port"); ("-d", Arg.Set_string dir, "DIR served under /assets/");
      ("--tls-cert", Arg.Set_string cert, "FILE certificate chain"); ("--tls-key", Arg.Set_string key, "FILE key");
      ("--io", Arg.Symbol ([ "uring"; "epoll" ], fun s -> io := if s = "epoll" then Server.Epoll else Server.Uring), " backend");
      ("--stats-token", Arg.Set_string stats, "TOKEN enable /__httpz/stats") ]
    (fun _ -> ()) "helpers_server.exe [-p PORT] [-d DIR] [--tls-cert FILE --tls-key FILE] [--io uring|epoll]";
  let tls = if !cert = "" then None else Some (Server.tls ~cert_file:!cert ~key_file:!key) in
  let stats = if !stats = "" then None else Some !stats in
  exit
    (Server.run { Server.default_config with port = !port; workers = 1; tls; io = !io; stats }
       (Helpers_app.handler ~root:!dir))
