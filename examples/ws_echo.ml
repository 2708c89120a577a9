(* WebSocket echo: `ws_echo.exe -p PORT [--tls-cert F --tls-key F]
   [--io epoll|uring] [--max-message BYTES] [--allow-origin ORIGIN]...`
   answers every message on any path with the same message, text as text
   and binary as binary (the Autobahn|Testsuite target:
   test/e2e/test_websocket.py, `make autobahn`). A browser page of another
   origin is refused (403) unless listed with --allow-origin (see
   Ws.same_origin).

   The echo allocates nothing per message: the payload is copied from the
   read buffer (or the reassembly buffer) into the connection's queue. *)

open Httpz_server

(* Autobahn's section 9 sends messages of 16 MiB. *)
let max_message = ref (64 lsl 20)
let allowed = ref []

let echo c kind buf ~off ~len = Ws.send c kind buf ~off ~len
let handlers = { Ws.on_message = echo; on_close = (fun _ _ -> ()) }

let handler config ctx = ignore (Ws.accept ~config ctx handlers : bool)

let () =
  let port = ref 9001 and cert = ref "" and key = ref "" and io = ref Server.default_config.io in
  Arg.parse
    [ ("-p", Arg.Set_int port, "PORT port (default 9001)");
      ("--tls-cert", Arg.Set_string cert, "FILE serve wss:// with this PEM certificate chain");
      ("--tls-key", Arg.Set_string key, "FILE and this PEM key");
      ("--io", Arg.Symbol ([ "uring"; "epoll" ], fun s -> io := if s = "epoll" then Server.Epoll else Server.Uring),
       " the backend (default uring)");
      ("--max-message", Arg.Set_int max_message, "BYTES largest message accepted (default 64 MiB)");
      ("--allow-origin", Arg.String (fun o -> allowed := o :: !allowed),
       "ORIGIN also accept upgrades from pages of this origin (scheme://host[:port]); repeatable") ]
    (fun _ -> ())
    "ws_echo.exe [-p PORT] [--tls-cert FILE --tls-key FILE] [--io uring|epoll] [--max-message BYTES] \
     [--allow-origin ORIGIN]...";
  (* Built once: accept only reads it. *)
  let config =
    { Ws.default_config with
      max_message = !max_message; max_send_buffer = 2 * !max_message; ping_interval_ms = 0;
      origins = Ws.allow_origins !allowed }
  in
  let tls = if !cert = "" then None else Some (Server.tls ~cert_file:!cert ~key_file:!key) in
  exit (Server.run { Server.default_config with port = !port; workers = 1; tls; io = !io } (handler config))
