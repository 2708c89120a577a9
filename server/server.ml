(* Configuration, start-up, and the supervisor that forks and restarts
   workers. The per-request work is in Loop. *)

type config = {
  host : string;
  port : int;
  workers : int;
  max_connections : int;
  backlog : int;
  read_buffer : int;
  write_buffer : int;
  max_body : int;
  header_timeout : float;
  idle_timeout : float;
  body_timeout : float;
  write_timeout : float;
  handler_timeout : float;
  grace_period : float;
  send_lowat : int;
  defer_accept : bool;
  stats : bool;
  access_log : out_channel option;
  server_name : string;
  root : string option;
  on_listen : int -> unit;
}

let cpu_count = Extra.cpu_count

let default_config =
  {
    host = "127.0.0.1";
    port = 8080;
    workers = cpu_count ();
    max_connections = 10_000;
    backlog = 4096;
    read_buffer = 32 * 1024;
    write_buffer = 16 * 1024;
    max_body = 1024 * 1024;
    header_timeout = 10.;
    idle_timeout = 60.;
    body_timeout = 30.;
    write_timeout = 30.;
    handler_timeout = 30.;
    grace_period = 10.;
    send_lowat = 16 * 1024;
    defer_accept = true;
    stats = false;
    access_log = None;
    server_name = "httpz";
    root = None;
    on_listen = ignore;
  }

let log fmt = Printf.eprintf ("httpz: " ^^ fmt ^^ "\n%!")

let ms s = if s <= 0. then 1 else int_of_float (Float.ceil (s *. 1000.))

let params c =
  {
    Loop.max_connections = c.max_connections;
    read_buffer = c.read_buffer;
    write_buffer = c.write_buffer;
    max_body = c.max_body;
    header_timeout_ms = ms c.header_timeout;
    idle_timeout_ms = ms c.idle_timeout;
    body_timeout_ms = ms c.body_timeout;
    write_timeout_ms = ms c.write_timeout;
    handler_timeout_ms = ms c.handler_timeout;
    grace_ms = (if c.grace_period <= 0. then 0 else ms c.grace_period);
    stats = c.stats;
    log_fd =
      (match c.access_log with
       | Some oc -> Syscall.fd_of_unix (Unix.descr_of_out_channel oc)
       | None -> -1);
    server_name = c.server_name;
  }

let check c =
  let bad fmt = Printf.ksprintf (fun s -> Error s) fmt in
  if c.max_connections < 1 then bad "max_connections must be at least 1"
  else if c.read_buffer < 1024 then bad "read_buffer must be at least 1024 bytes"
  else if c.write_buffer < 1024 then bad "write_buffer must be at least 1024 bytes"
  else if c.max_body < 0 then bad "max_body must not be negative"
  else if c.send_lowat < 0 || c.send_lowat > 0x3fff_ffff then
    bad "send_lowat must be between 0 and 1 GiB"
  else if c.port < 0 || c.port > 65535 then bad "port %d is outside 0-65535" c.port
  else if not (Httpz.Response.is_field_value c.server_name) then
    bad "server_name %S is not a valid header value" c.server_name
  else Ok ()

let url host port =
  if String.contains host ':' then Printf.sprintf "http://[%s]:%d" host port
  else Printf.sprintf "http://%s:%d" host port

let start_line c port workers =
  log "listening on %s (workers %d%s, openat2 %s)" (url c.host port) workers
    (match c.root with Some r -> ", root " ^ r | None -> "")
    (if Syscall.openat2_available () then "yes" else "no: walking paths without symlinks")

let stop_signals = [ Sys.sigterm; Sys.sigint; Sys.sighup ]

let flush_outputs c =
  flush_all ();
  match c.access_log with Some oc -> flush oc | None -> ()

(* {1 One process} *)

(* The listening socket: bound, tuned, then listening, so that no
   connection, not even one the kernel hands a restarted worker of a busy
   SO_REUSEPORT group at once, is accepted before the options are set.
   Accepted sockets inherit TCP_NODELAY and TCP_NOTSENT_LOWAT from it
   (Linux), which saves a setsockopt per connection. A failed option only
   costs speed, so it is logged, not fatal. The fd, or [-errno]. *)
let open_listener c ~reuseport =
  let lfd = Syscall.socket_bind ~host:c.host ~port:c.port ~reuseport in
  if lfd < 0 then lfd
  else begin
    let set what opt v =
      let r = Syscall.setsockopt lfd opt v in
      if r < 0 then log "setsockopt %s: %s (continuing without it)" what (Syscall.error_message r)
    in
    set "TCP_NODELAY" Syscall.Tcp_nodelay 1;
    if c.send_lowat > 0 then set "TCP_NOTSENT_LOWAT" Syscall.Tcp_notsent_lowat c.send_lowat;
    if c.defer_accept then set "TCP_DEFER_ACCEPT" Syscall.Tcp_defer_accept 1;
    let r = Syscall.listen lfd c.backlog in
    if r < 0 then begin
      ignore (Syscall.close lfd : int);
      r
    end
    else lfd
  end

let serve_here c handler lfd =
  let sfd = Extra.signalfd stop_signals in
  if sfd < 0 then begin
    log "signalfd: %s" (Syscall.error_message sfd);
    ignore (Syscall.close lfd : int);
    1
  end
  else
    Fun.protect
      ~finally:(fun () -> ignore (Syscall.close sfd : int))
      (fun () -> Loop.run (params c) ~listen_fd:lfd ~signal_fd:sfd handler)

(* {1 Supervisor} *)

(* A worker that dies within [quick_death] of its start counts as a crash
   loop: its restart waits [delay], doubled on each such death up to
   [max_delay]; a worker that lived longer is restarted at once. *)
let quick_death = 1.0
let min_delay = 0.1
let max_delay = 10.0

type slot = {
  mutable pid : int; (* 0: not running *)
  mutable started : float;
  mutable delay : float;
  mutable restart_at : float; (* when pid = 0 *)
  mutable ready : Unix.file_descr option; (* read end: one byte once listening *)
}

let worker_main c handler supervisor ready =
  (* A worker must not outlive its supervisor: the kernel sends SIGTERM
     (received through the signalfd, so it starts a graceful shutdown). *)
  ignore (Syscall.set_pdeathsig Sys.sigterm : int);
  if Unix.getppid () <> supervisor then Unix._exit 0;
  let code =
    try
      let lfd = open_listener c ~reuseport:true in
      if lfd < 0 then begin
        log "worker %d: listen on %s: %s" (Unix.getpid ()) (url c.host c.port)
          (Syscall.error_message lfd);
        1
      end
      else begin
        (try ignore (Unix.write_substring ready "." 0 1 : int) with Unix.Unix_error _ -> ());
        Unix.close ready;
        serve_here c handler lfd
      end
    with e ->
      log "worker %d died: %s" (Unix.getpid ()) (Printexc.to_string e);
      2
  in
  flush_outputs c;
  Unix._exit code

let describe_status = function
  | Unix.WEXITED n -> Printf.sprintf "exited with code %d" n
  | Unix.WSIGNALED s -> Printf.sprintf "was killed by signal %d" s
  | Unix.WSTOPPED s -> Printf.sprintf "was stopped by signal %d" s

(* Waits until every worker started so far reports that it listens; [false]
   if one fails (exits, or is not ready within 10 s). *)
let await_ready slots =
  let deadline = Unix.gettimeofday () +. 10. in
  let ok = ref true in
  Array.iter
    (fun s ->
      match s.ready with
      | None -> ok := false
      | Some fd ->
          let byte = Bytes.create 1 in
          let rec wait () =
            let left = deadline -. Unix.gettimeofday () in
            if left <= 0. then false
            else
              match Unix.select [ fd ] [] [] left with
              | [], _, _ -> false
              | _ -> (try Unix.read fd byte 0 1 = 1 with Unix.Unix_error _ -> false)
              | exception Unix.Unix_error (Unix.EINTR, _, _) -> wait ()
          in
          if not (wait ()) then ok := false;
          Unix.close fd;
          s.ready <- None)
    slots;
  !ok

let supervise c handler nworkers ~announce =
  let sfd = Extra.signalfd (Sys.sigchld :: stop_signals) in
  if sfd < 0 then begin
    log "signalfd: %s" (Syscall.error_message sfd);
    1
  end
  else begin
    let me = Unix.getpid () in
    let slots =
      Array.init nworkers (fun _ ->
          { pid = 0; started = 0.; delay = min_delay; restart_at = 0.; ready = None })
    in
    let spawn s =
      flush_outputs c;
      let r, w = Unix.pipe ~cloexec:true () in
      match Unix.fork () with
      | 0 ->
          ignore (Syscall.close sfd : int);
          Unix.close r;
          Array.iter (fun o -> match o.ready with Some fd -> Unix.close fd | None -> ()) slots;
          worker_main c handler me w
      | pid ->
          Unix.close w;
          (match s.ready with Some fd -> Unix.close fd | None -> ());
          s.ready <- Some r;
          s.pid <- pid;
          s.started <- Unix.gettimeofday ()
      | exception Unix.Unix_error (e, _, _) ->
          Unix.close r;
          Unix.close w;
          log "fork: %s" (Unix.error_message e);
          s.restart_at <- Unix.gettimeofday () +. s.delay
    in
    Array.iter spawn slots;
    let stopping = ref false in
    let forward signal =
      Array.iter
        (fun s -> if s.pid <> 0 then try Unix.kill s.pid signal with Unix.Unix_error _ -> ())
        slots
    in
    if await_ready slots then announce ()
    else begin
      log "workers failed to start";
      stopping := true;
      forward Sys.sigterm
    end;
    let failed = !stopping in
    let running () = Array.exists (fun s -> s.pid <> 0) slots in
    let reap () =
      let continue = ref true in
      while !continue do
        match Unix.waitpid [ Unix.WNOHANG ] (-1) with
        | 0, _ -> continue := false
        | pid, status -> (
            match List.find_opt (fun s -> s.pid = pid) (Array.to_list slots) with
            | None -> ()
            | Some s ->
                s.pid <- 0;
                (match s.ready with Some fd -> Unix.close fd; s.ready <- None | None -> ());
                let now = Unix.gettimeofday () in
                if not !stopping then begin
                  let quick = now -. s.started < quick_death in
                  s.delay <- (if quick then Float.min max_delay (s.delay *. 2.) else min_delay);
                  let wait = if quick then s.delay else 0. in
                  log "worker %d %s; restarting%s" pid (describe_status status)
                    (if wait > 0. then Printf.sprintf " in %.1f s" wait else "");
                  s.restart_at <- now +. wait
                end)
        | exception Unix.Unix_error (Unix.EINTR, _, _) -> ()
        | exception Unix.Unix_error (Unix.ECHILD, _, _) -> continue := false
      done
    in
    let pfd = [ Syscall.unix_of_fd sfd ] in
    while (not !stopping) || running () do
      let now = Unix.gettimeofday () in
      if not !stopping then
        Array.iter (fun s -> if s.pid = 0 && s.restart_at <= now then spawn s) slots;
      let timeout =
        Array.fold_left
          (fun acc s ->
            if s.pid = 0 && not !stopping then Float.min acc (s.restart_at -. now) else acc)
          1.0 slots
      in
      (match Unix.select pfd [] [] (Float.max 0.01 timeout) with
       | _ -> ()
       | exception Unix.Unix_error (Unix.EINTR, _, _) -> ());
      let continue = ref true in
      while !continue do
        let r = Extra.signalfd_read sfd in
        if r > 0 then begin
          let s = -r in
          if s = Sys.sigchld then reap ()
          else begin
            if not !stopping then log "stopping: workers finish in-flight requests";
            stopping := true;
            forward Sys.sigterm
          end
        end
        else if r <> - Syscall.eintr then continue := false
      done;
      (* SIGCHLD may coalesce with an earlier one already read: reap anyway. *)
      reap ()
    done;
    Array.iter (fun s -> match s.ready with Some fd -> Unix.close fd | None -> ()) slots;
    ignore (Syscall.close sfd : int);
    if failed then 1 else 0
  end

(* {1 Entry point} *)

let run c handler =
  match check c with
  | Error msg ->
      log "%s" msg;
      1
  | Ok () ->
      Syscall.ignore_sigpipe ();
      ignore (Syscall.raise_nofile_limit () : int);
      let workers = if c.workers <= 0 then cpu_count () else c.workers in
      (* Blocked before any fork or signalfd, so no signal is lost in
         between; restored on the way out. *)
      let old_mask = Unix.sigprocmask Unix.SIG_BLOCK (Sys.sigchld :: stop_signals) in
      Fun.protect
        ~finally:(fun () -> ignore (Unix.sigprocmask Unix.SIG_SETMASK old_mask : int list))
        (fun () ->
          if workers = 1 then begin
            let lfd = open_listener c ~reuseport:false in
            if lfd < 0 then begin
              log "listen on %s: %s" (url c.host c.port) (Syscall.error_message lfd);
              1
            end
            else begin
              let port = Syscall.local_port lfd in
              c.on_listen port;
              start_line c port 1;
              serve_here c handler lfd
            end
          end
          else begin
            (* Reserve the port (bound, not listening) for the whole run:
               a bad address or a busy port is reported before forking, a
               port 0 becomes a fixed one every worker can bind, and no
               other program can take it while a worker restarts. The start
               line and [on_listen] wait until every worker listens. *)
            let reserve = Extra.reserve_port ~host:c.host ~port:c.port in
            if reserve < 0 then begin
              log "listen on %s: %s" (url c.host c.port) (Syscall.error_message reserve);
              1
            end
            else
              Fun.protect
                ~finally:(fun () -> ignore (Syscall.close reserve : int))
                (fun () ->
                  let port = Syscall.local_port reserve in
                  let c = { c with port } in
                  let announce () =
                    c.on_listen port;
                    start_line c port workers
                  in
                  supervise c handler workers ~announce)
          end)
