(* The entry point: checks the configuration (Config), opens the sockets
   (Listeners), then serves in this process or under a Supervisor; plus
   what both need: the TLS context, the access log, reloads. *)

type tls = Config.tls

type io = Config.io = Epoll | Uring

type config = Config.t

(* The record's fields, from the one place that declares them. *)
open Config

let tls = Config.tls
let cpu_count = Config.cpu_count
let fd_reserve = Config.fd_reserve
let max_default_connections = Config.max_default_connections
let default_config = Config.default_config
let parse_listen = Config.parse_listen
let systemd_listen_fds = Listeners.systemd_listen_fds
let check c = Config.check c


(* {1 What a worker runs} *)

let params c ~log_fd ~totals = { Loop_state.config = c; alone = c.workers = 1; totals; log_fd }

(* The worker's listeners: [lfds] are the sockets of [Config.endpoints c],
   in order; [tls] the server's TLS, loaded before the workers forked. *)
let worker_listeners c handler tls lfds =
  let endpoints = Config.endpoints c in
  let https_port =
    match List.find_opt (fun (_, _, r) -> r = Config.Serve) endpoints with
    | Some (_, p, _) -> p
    | None -> 443
  in
  let hsts = Config.hsts_line c in
  Array.of_list
    (List.map2
       (fun (_, _, role) fd ->
         match role with
         | Config.Serve ->
             { Loop_state.listen_fd = fd; handler; tls; headers = (if tls = None then "" else hsts);
               front = With_stats }
         | Config.Serve_plain ->
             { Loop_state.listen_fd = fd; handler; tls = None; headers = ""; front = With_stats }
         | Config.Redirect ->
             (* The stats are not answered there: a redirect port serves
                nothing but redirects. *)
             { Loop_state.listen_fd = fd; handler = Https_redirect.handler ~port:https_port; tls = None;
               headers = ""; front = Bare }
         | Config.Status ->
             { Loop_state.listen_fd = fd; handler; tls = None; headers = ""; front = Status_only })
       endpoints lfds)

(* SIGTERM and SIGINT stop; SIGHUP reloads; SIGQUIT retires a generation. *)
let server_signals = [ Sys.sigterm; Sys.sigint; Sys.sighup; Sys.sigquit; Sys.sigusr1 (* reopen logs *) ]

(* {1 The application's hooks} *)

type hooks = {
  on_start : unit -> unit;
  on_stop : unit -> unit;
  on_worker_start : unit -> unit;
  on_worker_stop : unit -> unit;
}

let run_hook name f =
  match f () with
  | () -> true
  | exception e ->
      Log.error "%s raised %s" name (Printexc.to_string e);
      false

(* A stop hook runs for at most [bound] seconds: a watchdog thread ends
   the process past that (a hook stuck on a dead database must not keep a
   stopping server alive). *)
let run_bounded name bound f =
  let m = Mutex.create () and finished = ref false in
  let is_finished () = Mutex.lock m; let v = !finished in Mutex.unlock m; v in
  let watchdog =
    Thread.create
      (fun () ->
        let deadline = Unix.gettimeofday () +. bound in
        while (not (is_finished ())) && Unix.gettimeofday () < deadline do Thread.delay 0.02 done;
        if not (is_finished ()) then begin
          Log.error "%s did not return within %.1f s: exiting" name bound;
          Unix._exit 1
        end)
      ()
  in
  ignore (run_hook name f : bool);
  Mutex.lock m; finished := true; Mutex.unlock m;
  Thread.join watchdog

let hook_bound c = Float.max 1. c.grace_period

let serve_here ~hooks c handler tls lfds ~log_fd ~totals =
  Fun.protect ~finally:(fun () -> run_bounded "on_worker_stop" (hook_bound c) hooks.on_worker_stop) @@ fun () ->
  let sfd = Extra.signalfd server_signals in
  if sfd < 0 then begin
    Log.error "signalfd: %s" (Syscall.error_message sfd);
    Listeners.close_all lfds;
    1
  end
  else
    Fun.protect
      ~finally:(fun () -> ignore (Syscall.close sfd : int))
      (fun () ->
        Loop.run (params c ~log_fd ~totals) ~listeners:(worker_listeners c handler tls lfds) ~signal_fd:sfd)

(* {1 What the process that keeps its privileges reads} *)

let open_access_log = function
  | None -> Ok (-1)
  | Some "-" -> Ok 1
  | Some path -> Log_dest.open_dest path (* a file or syslog:…, reopened on SIGUSR1 *)

(* The TLS context, made by the process that keeps its privileges (the key
   may be readable by root alone) before the workers fork (every
   generation shares the ticket secret drawn here). *)
let load_tls c =
  match c.tls with
  | None -> Ok None
  | Some t ->
      Result.map_error (fun e -> "tls: " ^ e)
        (Result.bind (Openssl.init_tickets ~period:t.ticket_period) (fun () ->
             Openssl.set_alpn_h2 (c.http2 && c.read_buffer >= H2_session.min_read_buffer);
             Result.map Option.some (Tls.load ~sni:t.sni ~cert_file:t.cert_file ~key_file:t.key_file ())))

(* SIGHUP in the supervisor, which kept its privileges: the access log
   reopened at its path and the certificate and key read again, both as at
   start, or nothing changed. What was done, for the log line. *)
let reload c tls log_fd =
  let log_file = match c.access_log with None | Some "-" -> false | Some _ -> true in
  let error_log =
    match c.error_log with
    | None -> Ok false
    | Some _ -> Result.map (fun () -> true) (Log.reopen ())
  in
  match error_log with
  | Error msg -> Error (Printf.sprintf "reopening the error log: %s (nothing changed)" msg)
  | Ok false when not (log_file || tls <> None) -> Error "nothing to reload (no log file, no TLS)"
  | Ok error_log ->
    match if log_file then open_access_log c.access_log else Ok !log_fd with
    | Error msg -> Error (Printf.sprintf "reopening the access log: %s (nothing changed)" msg)
    | Ok fd -> (
        match match tls with None -> Ok () | Some t -> Tls.reload t with
        | Error msg ->
            if fd <> !log_fd then ignore (Syscall.close fd : int);
            Error (Printf.sprintf "reading the certificate and key: %s (nothing changed)" msg)
        | Ok () ->
            if fd <> !log_fd && !log_fd > 2 then ignore (Syscall.close !log_fd : int);
            log_fd := fd;
            Ok
              (String.concat ", "
                 ((if error_log then [ "error log reopened" ] else [])
                 @ (if log_file then [ "access log reopened" ] else [])
                 @ if tls <> None then [ "certificate and key read again" ] else [])))

(* {1 Entry point} *)

let endpoint_url c (h, p, role) =
  match (role, c.tls) with
  | Config.Serve, Some _ -> Config.url ~scheme:"https" h p
  | Config.Serve, None | Config.Serve_plain, _ -> Config.url h p
  | Config.Redirect, _ -> Config.url h p ^ " (redirecting to https)"
  | Config.Status, _ -> Config.url h p ^ Stats.path ^ " (status)"

let start_line c ~ktls =
  Log.msg "listening on %s (workers %d%s, openat2 %s%s, %s)"
    (String.concat ", " (List.map (endpoint_url c) (Config.endpoints c)))
    c.workers
    (match c.root with Some r -> ", root " ^ r | None -> "")
    (if Syscall.openat2_available () then "yes" else "no: walking paths without symlinks")
    (match (c.tls, ktls) with
     | None, _ -> ""
     | Some _, true -> ", TLS: kernel TLS for files"
     | Some _, false -> ", TLS: encrypting in user space (the kernel offers no TLS ULP)")
    (if not c.http2 then "HTTP/1.1 only"
     else if c.read_buffer < H2_session.min_read_buffer then
       Printf.sprintf "HTTP/1.1 only: HTTP/2 needs a read_buffer of at least %d bytes" H2_session.min_read_buffer
     else if c.tls <> None then "HTTP/2 by ALPN, h2c with prior knowledge on plain listeners"
     else "HTTP/2 with prior knowledge (h2c)")

type reconfigured = { config : config; handler : Ctx.t -> unit; release : unit -> unit }

(* What a generation of workers runs. *)
type current = {
  cfg : config;
  app : Ctx.t -> unit;
  tls_server : Tls.server option;
  log : int;
  free : unit -> unit;
}

(* SIGHUP with a configuration to read again: the new one checked and
   prepared as at start (its handler made, its certificates read, its log
   opened) by the supervisor, which kept its privileges. What it cannot
   change without closing a socket or the workers' ids (listening
   addresses, workers, user) is refused: nothing changes. *)
let reconfigure_with f ~started cur =
  let ( let* ) = Result.bind in
  let old = !cur in
  let* r = Result.map_error (fun e -> e ^ " (nothing changed)") (f ()) in
  let fail msg = r.release (); Error msg in
  let prepared =
    let c = { r.config with listen_fds = started.listen_fds } in
    let* c = if c.listen_fds = [] then Ok c else Listeners.adopt c in
    let* () = Config.check c in
    let* c = Listeners.resolve c in
    let c = Config.with_limits c ~nofile:(Syscall.raise_nofile_limit ()) in
    if Config.endpoints c <> Config.endpoints started then
      Error "the listening addresses changed: they take a restart"
    else if c.workers <> started.workers then Error "workers changed: that takes a restart"
    else if c.user <> started.user then Error "user changed: that takes a restart"
    (* Options of the listening sockets, which a reload keeps: a change
       would silently not apply. *)
    else if c.backlog <> started.backlog then Error "backlog changed: the listening sockets keep theirs, that takes a restart"
    else if c.send_lowat <> started.send_lowat then
      Error "send_lowat changed: the listening sockets keep theirs, that takes a restart"
    else if c.defer_accept <> started.defer_accept then
      Error "defer_accept changed: the listening sockets keep theirs, that takes a restart"
    else
      let c = { c with listen = old.cfg.listen; host = old.cfg.host; port = old.cfg.port; tls =
                  (match c.tls, old.cfg.tls with
                   | Some t, Some o -> Some { t with listen_plain = o.listen_plain; redirect_http = o.redirect_http }
                   | t, _ -> t) } in
      let* tls =
        match c.tls with
        | None -> Ok None
        | Some t -> Result.map_error (fun e -> "tls: " ^ e) (Result.map Option.some (Tls.load ~sni:t.sni ~cert_file:t.cert_file ~key_file:t.key_file ()))
      in
      let* () =
        match c.error_log with
        | None -> Ok ()
        | Some path -> Result.map_error (fun e -> "error log: " ^ e) (Log.use_file path)
      in
      Log.set_level c.log_level;
      match open_access_log c.access_log with
      | Error e -> Error ("access log: " ^ e)
      | Ok log -> Ok { cfg = c; app = r.handler; tls_server = tls; log; free = r.release }
  in
  match prepared with
  | Error msg -> fail (msg ^ " (nothing changed)")
  | Ok next ->
      cur := next;
      let settle ok =
        let gone = if ok then old else next in
        if not ok then cur := old;
        gone.free ();
        (match gone.tls_server with Some s -> Tls.free s | None -> ());
        if gone.log > 2 && gone.log <> !cur.log then ignore (Syscall.close gone.log : int)
      in
      Ok ("configuration read again", settle)

(* The sockets are open, the log too: serve, in this very process when
   there is one worker, no privileges to drop and no configuration to read
   again (SIGHUP reloads in place), else under a supervisor. The access
   log is closed on the way out. *)
let serve ?reconfigure ~hooks ~started c handler ~release tls user lfds ~log_fd =
  if not (run_hook "on_start" hooks.on_start) then begin
    Listeners.close_all lfds;
    if log_fd > 2 then ignore (Syscall.close log_fd : int);
    release ();
    1
  end
  else
  Fun.protect ~finally:(fun () -> run_bounded "on_stop" (hook_bound c) hooks.on_stop) @@ fun () ->
  let announce () =
    c.on_listen c.port;
    start_line c ~ktls:(match tls with Some s -> s.Tls.ktls | None -> false)
  in
  let cur = ref { cfg = c; app = handler; tls_server = tls; log = log_fd; free = release } in
  (* Shared by the workers forked below (and by the next generations). *)
  let totals =
    if c.stats <> None || c.stats_listen <> [] then Some (Totals.create ~rows:(Totals.rows_for ~workers:c.workers))
    else None
  in
  let code =
    if c.workers = 1 && user = None && reconfigure = None then begin
      if not (run_hook "on_worker_start" hooks.on_worker_start) then (Listeners.close_all lfds; 1)
      else begin
        announce ();
        serve_here ~hooks c handler tls lfds ~log_fd ~totals
      end
    end
    else
      let reload () =
        match reconfigure with
        | Some f -> reconfigure_with f ~started cur
        | None ->
            let log_fd = ref !cur.log in
            let r = reload c tls log_fd in
            cur := { !cur with log = !log_fd };
            Result.map (fun what -> (what, ignore)) r
      in
      Supervisor.run ~workers:c.workers ~user ~listeners:lfds ~announce
        ~worker_start:(fun () -> run_hook "on_worker_start" hooks.on_worker_start)
        ~serve:(fun ~lfds -> let k = !cur in serve_here ~hooks k.cfg k.app k.tls_server lfds ~log_fd:k.log ~totals)
        ~reload
  in
  let k = !cur in
  if k.log > 2 then ignore (Syscall.close k.log : int);
  k.free ();
  code

(* Signals are blocked before any fork or signalfd, so none is lost in
   between; the mask is restored on the way out. *)
let with_signals_blocked f =
  let old_mask = Unix.sigprocmask Unix.SIG_BLOCK (Sys.sigchld :: server_signals) in
  Fun.protect ~finally:(fun () -> ignore (Unix.sigprocmask Unix.SIG_SETMASK old_mask : int list)) f

let start ?reconfigure ?(on_start = ignore) ?(on_stop = ignore) ?(on_worker_start = ignore)
    ?(on_worker_stop = ignore) ~release c handler =
  let hooks = { on_start; on_stop; on_worker_start; on_worker_stop } in
  (* Each step's failure is one log line and exit code 1. *)
  let ( let* ) r f = match r with Error msg -> release (); Log.error "%s" msg; 1 | Ok v -> f v in
  Log.set_level c.log_level;
  let* () =
    match c.error_log with
    | None -> Ok ()
    | Some path -> Result.map_error (fun e -> "error log: " ^ e) (Log.use_file path)
  in
  let* c = Listeners.adopt c in
  let* () = Config.check c in
  let* c = Listeners.resolve c in
  Syscall.ignore_sigpipe ();
  let c = Config.with_limits c ~nofile:(Syscall.raise_nofile_limit ()) in
  let* user = Supervisor.account c.user in
  with_signals_blocked @@ fun () ->
  let* tls = load_tls c in
  let* lfds = Listeners.open_all c in
  let* log_fd =
    Result.map_error (fun msg -> Listeners.close_all lfds; "access log: " ^ msg)
      (open_access_log c.access_log)
  in
  serve ?reconfigure ~hooks ~started:c (Listeners.bound_ports c lfds) handler ~release tls user lfds ~log_fd

let run ?on_start ?on_stop ?on_worker_start ?on_worker_stop c handler =
  start ?on_start ?on_stop ?on_worker_start ?on_worker_stop ~release:ignore c handler

let run_reloading ?on_start ?on_stop ?on_worker_start ?on_worker_stop c handler ~release ~reconfigure =
  start ?on_start ?on_stop ?on_worker_start ?on_worker_stop ~reconfigure ~release c handler
