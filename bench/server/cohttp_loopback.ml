(* What both cohttp peers share: serving a callback on HOST:PORT only. *)

open Lwt.Infix

let serve ~host ~port callback =
  (* A client that closes early must not kill the server with SIGPIPE. *)
  Sys.set_signal Sys.sigpipe Sys.Signal_ignore;
  (* Bind the listening socket ourselves: conduit's [`Port] mode binds every
     address, and the benchmarks must stay on loopback. The backlog covers the
     1000-connection case. *)
  let fd = Lwt_unix.socket Unix.PF_INET Unix.SOCK_STREAM 0 in
  Lwt_unix.setsockopt fd Unix.SO_REUSEADDR true;
  let addr = Unix.ADDR_INET (Unix.inet_addr_of_string host, port) in
  let main =
    Lwt_unix.bind fd addr >>= fun () ->
    Lwt_unix.listen fd 4096;
    Cohttp_lwt_unix.Server.create ~on_exn:(fun _ -> ()) ~mode:(`TCP (`Socket fd))
      (Cohttp_lwt_unix.Server.make ~callback ())
  in
  Lwt_main.run main
