(* A server for test/e2e/test_errors.py: one error source per route, run
   with the renderer chosen by --errors:
     json     Server.config.errors = Errors.json, and a custom not-found
     none     nothing set (the answers as they always were)
     raising  a renderer that raises (the built-in text answer replaces it)
     router   Route.compile ~errors:Errors.html only (the server's unset)
     reentrant  a renderer that answers through Respond.error_reason
   Short limits so that each error comes fast: max_body 1024, a 1 s body
   timeout, a 2 s handler timeout, one offload thread with a queue of one. *)

open Httpz
open Httpz_server

let custom_not_found c = Respond.json c ~status:Status.Not_found "{\"error\":\"custom not found\"}\n"

let routes ~mode ~static ~forbidden ~auth =
  let r = Route.router () in
  Route.get r "/" (fun c -> Respond.text c "ok\n");
  Route.get r "/only-get" (fun c -> Respond.text c "got\n");
  Route.get r "/dir/" (fun c -> Respond.text c "dir\n");
  Route.get r "/items/:id" (fun c -> Respond.text c (Route.param c "id" ^ "\n"));
  (* A streamed body with a limit of 100 bytes: 413 past it. *)
  Route.post r "/stream" (fun c ->
      let n = ref 0 in
      let rec k c =
        if Ctx.body_ended c then Respond.text c (string_of_int !n ^ "\n")
        else begin
          n := !n + Span.len (Ctx.body_piece c);
          Ctx.read_body c ~limit:100 k
        end
      in
      Ctx.read_body c ~limit:100 k);
  (* A body read whole: 413 past max_body, 408 when it stops coming. *)
  Route.post r "/whole" (fun c ->
      if Ctx.body_ready c then Respond.text c (string_of_int (Span.len (Ctx.body c)) ^ "\n") else Ctx.await_body c);
  Route.get r "/raise" (fun _ -> failwith "handler bug");
  Route.get r "/silent" (fun _ -> ());
  Route.get r "/hang" (fun c -> ignore (Ctx.suspend c (fun c -> Respond.text c "late\n") : unit -> unit));
  Route.get r "/reason" (fun c -> Respond.error_reason c Status.Conflict "a \"quoted\" <b>reason</b> \\ \001 caf\xc3\xa9");
  Route.get r "/teapot" (fun c -> Respond.error c Status.Not_acceptable);
  Route.get r "/slow" (fun c -> Ctx.offload c (fun () -> Unix.sleepf 0.8) (fun () c -> Respond.text c "slow\n"));
  Route.get r "/forbidden" (Guard.handler forbidden ~app:(fun c -> Respond.text c "never\n"));
  Route.get r "/auth" (Guard.handler auth ~app:(fun c -> Respond.text c "in\n"));
  Route.mount r "/assets" static;
  if mode = "json" then Route.not_found r custom_not_found;
  if mode = "router" then Route.compile ~errors:Errors.html r else Route.compile r

let raising _ _ ~reason:_ = failwith "renderer bug"
let reentrant c status ~reason = Respond.error_reason c status ("again: " ^ reason)

let () =
  let port = ref 0 and dir = ref "." and cert = ref "" and key = ref "" and io = ref Server.default_config.io
  and mode = ref "json" and users = ref "" and stats = ref "" in
  Arg.parse
    [ ("-p", Arg.Set_int port, "PORT");
      ("-d", Arg.Set_string dir, "DIR served under /assets/");
      ("--tls-cert", Arg.Set_string cert, "FILE");
      ("--tls-key", Arg.Set_string key, "FILE");
      ("--io", Arg.Symbol ([ "uring"; "epoll" ], fun s -> io := if s = "epoll" then Server.Epoll else Server.Uring), "");
      ("--errors", Arg.Symbol ([ "json"; "none"; "raising"; "router"; "reentrant" ], ( := ) mode), " the renderer");
      ("--users", Arg.Set_string users, "FILE the Basic user file of /auth");
      ("--stats-token", Arg.Set_string stats, "TOKEN serve /__httpz/stats") ]
    (fun _ -> ()) "errors_server.exe -p PORT [-d DIR] [--errors MODE] [--users FILE]";
  let tls = if !cert = "" then None else Some (Server.tls ~cert_file:!cert ~key_file:!key) in
  let ok = function Ok v -> v | Error e -> prerr_endline ("errors_server: " ^ e); exit 1 in
  let static =
    Httpz_static.Static.handler
      (ok (Httpz_static.Static.create { Httpz_static.Static.default_config with root = !dir; mount = "/assets/" }))
  in
  let forbidden = ok (Guard.create { Guard.none with access = [ (Address_rules.Deny, "all") ] }) in
  let auth = ok (Guard.create { Guard.none with auth = Some { realm = "errors test"; user_file = !users } }) in
  let errors = match !mode with "json" -> Some Errors.json | "raising" -> Some raising | "reentrant" -> Some reentrant | _ -> None in
  let config =
    { Server.default_config with
      port = !port; workers = 1; tls; io = !io; errors; max_body = 1024; body_timeout = 1.0;
      handler_timeout = 2.0; offload_threads = 1; offload_queue = 1;
      stats = (if !stats = "" then None else Some !stats) }
  in
  exit (Server.run config (Route.handler (routes ~mode:!mode ~static ~forbidden ~auth)))
