(* A server for test/e2e/test_sessions_sql.py: sessions in SQLite
   (--sqlite FILE) or PostgreSQL (--pg CONNINFO), lifecycle hooks that
   append to an event file (--events FILE), and a few routes:
     GET  /whoami        "pid=P user=U" (U "-" when none)
     POST /login?user=U  regenerate, set user, "ok"
     POST /logout        clear
     GET  /csrf          the session's CSRF token
     POST /csrf          X-CSRF-Token checked: 200 "checked" or 403
     POST /set?k=&v=     one more key (an update without a new id)
     GET  /slow          answers after 1 s (a request in flight at SIGTERM) *)
open Httpz
open Httpz_server

let () =
  let port = ref 8080 and cert = ref "" and key = ref "" and io = ref Server.default_config.io in
  let workers = ref 1 and sqlite = ref "" and pg = ref "" and events = ref "" and max_age = ref 3600 in
  let grace = ref 5. and stop_sleep = ref 0. and raise_in = ref "" and access_log = ref "" in
  Arg.parse
    [ ("-p", Arg.Set_int port, "PORT");
      ("--tls-cert", Arg.Set_string cert, "FILE"); ("--tls-key", Arg.Set_string key, "FILE");
      ("--io", Arg.Symbol ([ "uring"; "epoll" ], fun s -> io := if s = "epoll" then Server.Epoll else Server.Uring), "");
      ("--workers", Arg.Set_int workers, "N"); ("--sqlite", Arg.Set_string sqlite, "FILE");
      ("--pg", Arg.Set_string pg, "CONNINFO"); ("--events", Arg.Set_string events, "FILE hooks append here");
      ("--max-age", Arg.Set_int max_age, "SECONDS session lifetime");
      ("--grace", Arg.Set_float grace, "SECONDS grace period");
      ("--stop-sleep", Arg.Set_float stop_sleep, "SECONDS on_worker_stop sleeps that long");
      ("--raise-in", Arg.Set_string raise_in, "HOOK that hook raises");
      ("--access-log", Arg.Set_string access_log, "FILE (so that SIGHUP reloads: a new generation)") ]
    (fun _ -> ()) "sessions_server.exe [options]";
  let event what =
    if !events <> "" then begin
      let oc = open_out_gen [ Open_append; Open_creat; Open_wronly ] 0o644 !events in
      Printf.fprintf oc "%s %d\n" what (Unix.getpid ());
      close_out oc
    end;
    if !raise_in = what then failwith ("test: " ^ what ^ " raises")
  in
  let store, check_db, close_db =
    if !pg <> "" then
      let db = Httpz_session_postgresql.Session_postgresql.create ~conninfo:!pg () in
      ( Httpz_session_postgresql.Session_postgresql.store ~max_age:!max_age db,
        (fun () -> ignore (Httpz_session_postgresql.Session_postgresql.sweep db ~now:0 : int)),
        fun () -> Httpz_session_postgresql.Session_postgresql.close db )
    else
      let db = Httpz_session_sqlite.Session_sqlite.create !sqlite in
      ( Httpz_session_sqlite.Session_sqlite.store ~max_age:!max_age db,
        (fun () -> ignore (Httpz_session_sqlite.Session_sqlite.sweep db ~now:0 : int)),
        fun () -> Httpz_session_sqlite.Session_sqlite.close db )
  in
  let csrf = Csrf.create store in
  let pid () = string_of_int (Unix.getpid ()) in
  let r = Route.router () in
  Route.get r "/whoami" (fun c ->
      Session.with_session store c (fun s c ->
          Respond.text c
            (Printf.sprintf "pid=%s user=%s" (pid ()) (match Session.get s "user" with Some u -> u | None -> "-"))));
  Route.post r "/login" (fun c ->
      let user = match Req.query c "user" with Some u -> u | None -> "" in
      Session.with_session store c (fun s c ->
          Session.regenerate s;
          Session.set s "user" user;
          Session.save s c (fun c -> Respond.text c ("ok pid=" ^ pid ()))));
  Route.post r "/set" (fun c ->
      let k = Option.value ~default:"" (Req.query c "k") and v = Option.value ~default:"" (Req.query c "v") in
      Session.with_session store c (fun s c ->
          Session.set s k v;
          Session.save s c (fun c -> Respond.text c (String.concat "&" (List.map (fun (k, v) -> k ^ "=" ^ v) (List.sort compare (Session.bindings s)))))));
  Route.post r "/logout" (fun c ->
      Session.with_session store c (fun s c ->
          Session.clear s;
          Session.save s c (fun c -> Respond.text c "bye")));
  Route.get r "/csrf" (fun c ->
      Session.with_session store c (fun s c ->
          let t = Csrf.token csrf s in
          Session.save s c (fun c -> Respond.text c t)));
  Route.post r "/csrf" (fun c ->
      Session.with_session store c (fun s c ->
          match Csrf.check_session csrf c s with
          | Ok () -> Respond.text c "checked"
          | Error f -> Respond.error_reason c Status.Forbidden (Csrf.failure_to_string f)));
  (* A form route: Route's own CSRF check, with the session read off the
     loop, then the handler with its path parameter. *)
  Route.post_form r "/form/:name" (fun c -> Respond.text c ("form " ^ Route.param c "name"));
  Route.get r "/slow" (fun c ->
      Ctx.sleep c 1.0 (fun c ->
          event "slow_done";
          Respond.text c "slow"));
  let tls = if !cert = "" then None else Some (Server.tls ~cert_file:!cert ~key_file:!key) in
  exit
    (Server.run
       ~on_start:(fun () -> event "start")
       ~on_stop:(fun () -> event "stop")
       ~on_worker_start:(fun () ->
         (* The worker's own connections: checked here (one query through
            the pool, on this thread), opened by each offload thread on
            its first use. *)
         check_db ();
         event "worker_start")
       ~on_worker_stop:(fun () ->
         close_db ();
         if !stop_sleep > 0. then Unix.sleepf !stop_sleep;
         event "worker_stop")
       { Server.default_config with port = !port; host = "127.0.0.1"; workers = !workers; tls; io = !io;
         grace_period = !grace; access_log = (if !access_log = "" then None else Some !access_log) }
       (Route.handler (Route.compile ~csrf r)))
