(* Lwt code in httpz handlers, on the worker's own loop (Httpz_lwt).

   lwt_demo.exe -p PORT -f FILE   (one worker, 127.0.0.1)
   GET /sleep  -> after Lwt_unix.sleep 0.2: "slept 200 ms\n"
   GET /file   -> FILE's bytes, read with Lwt_io
   anything else -> 404 *)

open Httpz
open Httpz_server

let text c status body =
  Ctx.start c status;
  Ctx.header c Header_name.Content_type "text/plain; charset=utf-8";
  Ctx.body_string c body

let handler file c =
  let path = Request.target (Ctx.request c) and buf = Ctx.buffer c in
  if Span.equal buf path "/sleep" then
    Httpz_lwt.await c (Lwt_unix.sleep 0.2) (fun () c -> text c Status.Ok "slept 200 ms\n")
  else if Span.equal buf path "/file" then
    Httpz_lwt.await c
      (Lwt_io.with_file ~mode:Lwt_io.Input file Lwt_io.read)
      (fun contents c -> text c Status.Ok contents)
  else text c Status.Not_found "not found\n"

let () =
  let port = ref 8080 and file = ref Sys.executable_name and cert = ref "" and key = ref "" and io = ref Server.default_config.io in
  Arg.parse
    [ ("-p", Arg.Set_int port, "PORT port (default 8080)"); ("-f", Arg.Set_string file, "FILE served at /file");
      ("--tls-cert", Arg.Set_string cert, "FILE serve HTTPS with this PEM certificate chain");
      ("--tls-key", Arg.Set_string key, "FILE and this PEM key");
      ("--io", Arg.Symbol ([ "uring"; "epoll" ], fun s -> io := if s = "epoll" then Server.Epoll else Server.Uring),
       " the backend (default uring)") ]
    (fun _ -> ()) "lwt_demo.exe [-p PORT] [-f FILE] [--tls-cert FILE --tls-key FILE] [--io uring|epoll]";
  let tls = if !cert = "" then None else Some (Server.tls ~cert_file:!cert ~key_file:!key) in
  exit (Server.run { Server.default_config with port = !port; workers = 1; tls; io = !io } (handler !file))
