(* Configuration, start-up checks, listening sockets, privileges and
   reloads; the processes are Supervisor's, the per-request work Loop's. *)

type tls = {
  cert_file : string;
  key_file : string;
  hsts : int option;
  redirect_http : (string * int) list;
  ticket_period : int;
}

let tls ~cert_file ~key_file =
  { cert_file; key_file; hsts = None; redirect_http = []; ticket_period = 3600 }

type io = Loop_state.io = Epoll | Uring

type config = {
  io : io;
  host : string;
  port : int;
  listen : (string * int) list;
  listen_fds : int list;
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
  offload_threads : int;
  offload_queue : int;
  grace_period : float;
  send_lowat : int;
  defer_accept : bool;
  stats : string option;
  tls : tls option;
  access_log : string option;
  log_format : Access_log.format;
  headers : (string * string) list;
  user : string option;
  server_name : string;
  root : string option;
  on_listen : int -> unit;
}

let cpu_count = Extra.cpu_count
let fd_reserve = 64
let max_default_connections = 65_536

let default_config =
  {
    io = Uring;
    host = "127.0.0.1";
    port = 8080;
    listen = [];
    listen_fds = [];
    workers = cpu_count ();
    max_connections = 0;
    backlog = 4096;
    read_buffer = 32 * 1024;
    write_buffer = 16 * 1024;
    max_body = 1024 * 1024;
    header_timeout = 10.;
    idle_timeout = 60.;
    body_timeout = 30.;
    write_timeout = 30.;
    handler_timeout = 30.;
    offload_threads = 4;
    offload_queue = 0;
    grace_period = 10.;
    send_lowat = 16 * 1024;
    defer_accept = true;
    stats = None;
    access_log = None;
    log_format = Access_log.Common;
    tls = None;
    headers = [ ("X-Content-Type-Options", "nosniff") ];
    user = None;
    server_name = "httpz";
    root = None;
    on_listen = ignore;
  }


let ms s = if s <= 0. then 1 else int_of_float (Float.ceil (s *. 1000.))

let params c ~log_fd =
  {
    Loop_state.io = c.io;
    alone = c.workers = 1;
    max_connections = c.max_connections;
    read_buffer = c.read_buffer;
    write_buffer = c.write_buffer;
    max_body = c.max_body;
    header_timeout_ms = ms c.header_timeout;
    idle_timeout_ms = ms c.idle_timeout;
    body_timeout_ms = ms c.body_timeout;
    write_timeout_ms = ms c.write_timeout;
    handler_timeout_ms = ms c.handler_timeout;
    grace_ms = (if c.grace_period <= 0. then 0 else ms c.grace_period);
    offload_threads = c.offload_threads;
    offload_queue = c.offload_queue;
    stats = Option.map (fun token -> "Bearer " ^ token) c.stats;
    log_fd;
    log_path = (match c.access_log with Some "-" | None -> None | Some p -> Some p);
    log_format = c.log_format;
    headers = String.concat "" (List.map (fun (n, v) -> n ^ ": " ^ v ^ "\r\n") c.headers);
    server_name = c.server_name;
  }

(* Where the server listens: [listen], or [host]:[port] when it is empty. *)
let addresses c = if c.listen = [] then [ (c.host, c.port) ] else c.listen

(* "HOST:PORT", "[IPv6]:PORT" or ":PORT" (every IPv4 interface). *)
let parse_listen s =
  let bad fmt = Printf.ksprintf (fun m -> Error (Printf.sprintf "%S: %s" s m)) fmt in
  let port_of p =
    if p = "" || String.length p > 5 || not (String.for_all (fun ch -> ch >= '0' && ch <= '9') p)
    then bad "the port must be a number (0-65535)"
    else
      let n = int_of_string p in
      if n > 65535 then bad "port %d is out of range (0-65535)" n else Ok n
  in
  let with_port host p =
    match port_of p with Ok n -> Ok (host, n) | Error e -> Error e
  in
  if s = "" then bad "give ADDR:PORT"
  else if s.[0] = '[' then
    match String.index_opt s ']' with
    | None -> bad "missing ']' after the IPv6 address"
    | Some i ->
        let host = String.sub s 1 (i - 1) in
        let rest = String.sub s (i + 1) (String.length s - i - 1) in
        if String.length rest < 2 || rest.[0] <> ':' then bad "give the port after the brackets: [ADDR]:PORT"
        else (
          match Unix.inet_addr_of_string host with
          | a when Unix.domain_of_sockaddr (Unix.ADDR_INET (a, 0)) = Unix.PF_INET6 ->
              with_port host (String.sub rest 1 (String.length rest - 1))
          | _ -> bad "%s is not an IPv6 address" host
          | exception Failure _ -> bad "%s is not an IPv6 address" host)
  else
    match String.rindex_opt s ':' with
    | None -> bad "give ADDR:PORT (or :PORT for every IPv4 interface)"
    | Some i when String.index s ':' <> i ->
        bad "an IPv6 address goes in brackets: [ADDR]:PORT"
    | Some i ->
        let host = String.sub s 0 i in
        let host = if host = "" then "0.0.0.0" else host in
        if String.exists (fun ch -> ch <= ' ' || ch = '/' || ch = '[' || ch = ']') host then
          bad "%S is not an address or host name" host
        else with_port host (String.sub s (i + 1) (String.length s - i - 1))

(* What a listening socket is for: serving the handler (over TLS when the
   server has it), or redirecting plain HTTP to https. *)
type role = Serve | Redirect

let endpoints c =
  List.map (fun (h, p) -> (h, p, Serve)) (addresses c)
  @ match c.tls with Some t -> List.map (fun (h, p) -> (h, p, Redirect)) t.redirect_http | None -> []

(* The header line an https listener adds to every response. *)
let hsts_line c =
  match c.tls with
  | Some { hsts = Some n; _ } -> Printf.sprintf "Strict-Transport-Security: max-age=%d\r\n" n
  | _ -> ""

(* Bytes of the header lines every response head carries whatever the
   handler adds: Server, the configured headers, HSTS. *)
let fixed_head_bytes c =
  List.fold_left
    (fun acc (n, v) -> acc + String.length n + String.length v + 4)
    (String.length "Server: \r\n" + String.length c.server_name + String.length (hsts_line c))
    c.headers

let check c =
  let bad fmt = Printf.ksprintf (fun s -> Error s) fmt in
  if c.max_connections < 0 then bad "max_connections must not be negative"
  else if c.read_buffer < 1024 then bad "read_buffer must be at least 1024 bytes"
  else if c.write_buffer < 1024 then bad "write_buffer must be at least 1024 bytes"
  else if c.max_body < 0 then bad "max_body must not be negative"
  else if c.offload_threads < 1 then bad "offload_threads must be at least 1"
  else if c.offload_queue < 0 then bad "offload_queue must not be negative"
  else if c.send_lowat < 0 || c.send_lowat > 0x3fff_ffff then
    bad "send_lowat must be between 0 and 1 GiB"
  else if List.exists (fun (_, p, _) -> p < 0 || p > 65535) (endpoints c) then
    bad "a port is outside 0-65535"
  else if (match c.tls with Some t -> t.cert_file = "" || t.key_file = "" | None -> false) then
    bad "tls: give both a certificate and a key file"
  else if (match c.tls with Some { hsts = Some n; _ } -> n < 0 | _ -> false) then
    bad "tls: hsts must not be negative"
  else if (match c.stats with Some t -> t = "" || not (String.for_all Httpz.Charset.is_tchar t) | None -> false)
  then bad "the stats token must be a non-empty token (letters, digits and !#$%%&'*+-.^_`|~)"
  else if not (Httpz.Response.is_field_value c.server_name) then
    bad "server_name %S is not a valid header value" c.server_name
  else
    match
      List.find_opt
        (fun (n, v) ->
          n = "" || not (String.for_all Httpz.Charset.is_tchar n && Httpz.Response.is_field_value v))
        c.headers
    with
    | Some (n, _) -> bad "header %S: not a token name with a valid value (no CR, LF or NUL)" n
    | None ->
        (* A response head is written whole into the write buffer: the
           fixed lines may take half of it, the other half is left for the
           status line, Date and what the handler adds. *)
        let fixed = fixed_head_bytes c in
        if fixed > c.write_buffer / 2 then
          bad
            "headers: the Server line, the added header fields%s take %d bytes, more than half \
             of the %d-byte write buffer (at most %d): every response head must fit in it"
            (if hsts_line c = "" then "" else " and Strict-Transport-Security")
            fixed c.write_buffer (c.write_buffer / 2)
        else Ok ()

let url ?(scheme = "http") host port =
  if String.contains host ':' then Printf.sprintf "%s://[%s]:%d" scheme host port
  else Printf.sprintf "%s://%s:%d" scheme host port

let endpoint_url c (h, p, role) =
  match (role, c.tls) with
  | Serve, Some _ -> url ~scheme:"https" h p
  | Serve, None -> url h p
  | Redirect, _ -> url h p ^ " (redirecting to https)"

let start_line c workers ~ktls =
  Log.msg "listening on %s (workers %d%s, openat2 %s%s)"
    (String.concat ", " (List.map (endpoint_url c) (endpoints c)))
    workers
    (match c.root with Some r -> ", root " ^ r | None -> "")
    (if Syscall.openat2_available () then "yes" else "no: walking paths without symlinks")
    (match (c.tls, ktls) with
     | None, _ -> ""
     | Some _, true -> ", TLS: kernel TLS for files"
     | Some _, false -> ", TLS: encrypting in user space (the kernel offers no TLS ULP)")

(* SIGTERM and SIGINT stop; SIGHUP reopens the access log and goes on. *)
let server_signals = [ Sys.sigterm; Sys.sigint; Sys.sighup; Sys.sigquit ]

(* {1 Start-up} *)

(* A host name becomes the first address it resolves to. *)
let resolve host =
  match Unix.inet_addr_of_string host with
  | _ -> Ok host
  | exception Failure _ -> (
      match
        Unix.getaddrinfo host "" [ Unix.AI_SOCKTYPE Unix.SOCK_STREAM ]
      with
      | { Unix.ai_addr = Unix.ADDR_INET (a, _); _ } :: _ -> Ok (Unix.string_of_inet_addr a)
      | _ -> Error (Printf.sprintf "%s: no address found" host)
      | exception Unix.Unix_error (e, _, _) -> Error (host ^ ": " ^ Unix.error_message e))

let open_access_log = function
  | None -> Ok (-1)
  | Some "-" -> Ok 1
  | Some path -> (
      match
        Unix.openfile path [ Unix.O_WRONLY; Unix.O_APPEND; Unix.O_CREAT; Unix.O_CLOEXEC ] 0o644
      with
      | fd -> Ok (Syscall.fd_of_unix fd)
      | exception Unix.Unix_error (e, _, _) -> Error (path ^ ": " ^ Unix.error_message e))

(* {1 Privileges}

   The supervisor keeps the privileges it was started with: SIGHUP reopens
   the access log and reads the key as it did at start (a log in a
   root-only directory, a key readable by root alone). Each worker drops
   them right after fork, before it touches a client. *)


let lookup_user = function
  | None ->
      if Unix.geteuid () = 0 then
        Log.msg "serving as root: every file root can read is readable through the handler; \
             give --user (config.user) to run as an unprivileged user";
      Ok None
  | Some name -> (
      match Unix.getpwnam name with
      | exception Not_found -> Error (Printf.sprintf "user %s: no such user" name)
      | pw ->
          let me = Unix.geteuid () in
          if me <> 0 && pw.Unix.pw_uid <> me then
            Error
              (Printf.sprintf "user %s: only root can serve as another user (running as uid %d)" name
                 me)
          else Ok (Some { Supervisor.name; uid = pw.Unix.pw_uid; gid = pw.Unix.pw_gid }))

(* {1 Sockets handed over (systemd socket activation)} *)

(* [f] on every element, or the first failure. *)
let map_all f l =
  List.fold_right
    (fun x acc ->
      match (acc, f x) with
      | Error e, _ | _, Error e -> Error e
      | Ok l, Ok y -> Ok (y :: l))
    l (Ok [])

let listen_fds_start = 3

let systemd_listen_fds () =
  let get v = match Sys.getenv_opt v with Some "" | None -> None | Some x -> Some x in
  match (get "LISTEN_PID", get "LISTEN_FDS") with
  | None, _ | _, None -> Ok []
  | Some pid, Some n -> (
      (* sd_listen_fds(3) with unset_environment: children (a handler's
         subprocess, a restarted worker) must not take them again. *)
      List.iter (fun v -> Unix.putenv v "") [ "LISTEN_PID"; "LISTEN_FDS"; "LISTEN_FDNAMES" ];
      match (int_of_string_opt pid, int_of_string_opt n) with
      | Some pid, _ when pid <> Unix.getpid () -> Ok []
      | Some _, Some n when n >= 1 && n <= 1024 ->
          Ok (List.init n (fun i -> listen_fds_start + i))
      | _ -> Error (Printf.sprintf "LISTEN_PID=%s LISTEN_FDS=%s: not a valid socket hand-over" pid n))

(* The address of each handed-over socket, checked to be a listening TCP
   socket, made non-blocking and close-on-exec like ours. *)
let inherit_listeners fds =
  let one fd =
    let u = Syscall.unix_of_fd fd in
    match
      ( Unix.getsockname u,
        Unix.getsockopt_int u Unix.SO_TYPE,
        Unix.getsockopt u Unix.SO_ACCEPTCONN )
    with
    | Unix.ADDR_INET (a, port), ty, true when ty = 1 (* SOCK_STREAM *) ->
        Unix.set_nonblock u;
        Unix.set_close_on_exec u;
        Ok (Unix.string_of_inet_addr a, port)
    | Unix.ADDR_UNIX _, _, _ -> Error (Printf.sprintf "fd %d: a Unix socket, not TCP" fd)
    | _, _, false -> Error (Printf.sprintf "fd %d: not a listening socket" fd)
    | _ -> Error (Printf.sprintf "fd %d: not a stream socket" fd)
    | exception Unix.Unix_error (e, _, _) ->
        Error (Printf.sprintf "fd %d: %s" fd (Unix.error_message e))
  in
  map_all one fds

(* {1 One process} *)

(* The listening socket, one for the whole server: bound without
   SO_REUSEPORT, so a second server started on the same address by
   mistake gets "address already in use" instead of half of the traffic;
   created before any worker is forked, and inherited by all of them and
   by every restarted one (which finds the accept queue as it was). Tuned
   before it listens, so no connection is accepted without the options:
   accepted sockets inherit TCP_NODELAY and TCP_NOTSENT_LOWAT from it
   (Linux), which saves a setsockopt per connection. A failed option only
   costs speed, so it is logged, not fatal. The fd, or [-errno]. *)
let tune c lfd =
  let set what opt v =
    let r = Syscall.setsockopt lfd opt v in
    if r < 0 then Log.msg "setsockopt %s: %s (continuing without it)" what (Syscall.error_message r)
  in
  set "TCP_NODELAY" Syscall.Tcp_nodelay 1;
  if c.send_lowat > 0 then set "TCP_NOTSENT_LOWAT" Syscall.Tcp_notsent_lowat c.send_lowat;
  if c.defer_accept then set "TCP_DEFER_ACCEPT" Syscall.Tcp_defer_accept 1

let open_listener c (host, port) =
  let lfd = Syscall.socket_bind ~host ~port ~reuseport:false in
  if lfd < 0 then lfd
  else begin
    tune c lfd;
    let r = Syscall.listen lfd c.backlog in
    if r < 0 then begin
      ignore (Syscall.close lfd : int);
      r
    end
    else lfd
  end

let close_all fds = List.iter (fun fd -> if fd >= 0 then ignore (Syscall.close fd : int)) fds

(* Opens every address, or none: the fds, or the first error. Sockets
   handed over ([listen_fds]) stand for the [Serve] endpoints (their
   addresses were read from them: {!inherit_listeners}); they are tuned
   like ours, and closed with the others on failure. *)
let open_listeners c =
  let inherited = ref c.listen_fds in
  let rec go acc = function
    | [] -> Ok (List.rev acc)
    | (_, _, Serve) :: rest when !inherited <> [] ->
        let fd = List.hd !inherited in
        inherited := List.tl !inherited;
        tune c fd;
        go (fd :: acc) rest
    | (host, port, _) :: rest ->
        let fd = open_listener c (host, port) in
        if fd < 0 then begin
          close_all acc;
          Error (Printf.sprintf "listen on %s: %s" (url host port) (Syscall.error_message fd))
        end
        else go (fd :: acc) rest
  in
  go [] (endpoints c)

(* The worker's listeners: [lfds] are the sockets of [endpoints c], in
   order; [tls] the server's TLS, loaded before the workers forked. *)
let listeners c handler tls lfds =
  let https_port =
    match List.find_opt (fun (_, _, r) -> r = Serve) (endpoints c) with
    | Some (_, p, _) -> p
    | None -> 443
  in
  let hsts = hsts_line c in
  Array.of_list
    (List.map2
       (fun (_, _, role) fd ->
         match role with
         | Serve -> { Loop_state.listen_fd = fd; handler; tls; headers = (if tls = None then "" else hsts) }
         | Redirect ->
             { Loop_state.listen_fd = fd; handler = Https_redirect.handler ~port:https_port; tls = None;
               headers = "" })
       (endpoints c) lfds)

let serve_here c handler tls lfds ~log_fd =
  let sfd = Extra.signalfd server_signals in
  if sfd < 0 then begin
    Log.msg "signalfd: %s" (Syscall.error_message sfd);
    close_all lfds;
    1
  end
  else
    Fun.protect
      ~finally:(fun () -> ignore (Syscall.close sfd : int))
      (fun () ->
        Loop.run (params c ~log_fd) ~listeners:(listeners c handler tls lfds) ~signal_fd:sfd)

(* {1 Reload} *)

(* SIGHUP in the supervisor, which kept its privileges: the access log
   reopened at its path and the certificate and key read again, both as at
   start, or nothing changed. What was done, for the log line. *)
let reload c tls log_fd =
  let log_file = match c.access_log with None | Some "-" -> false | Some _ -> true in
  if not (log_file || tls <> None) then Error "nothing to reload (no access log file, no TLS)"
  else
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
                 ((if log_file then [ "access log reopened" ] else [])
                 @ if tls <> None then [ "certificate and key read again" ] else [])))

(* {1 Entry point} *)

(* Every address with its host resolved, or the first failure. *)
let resolve_list l = map_all (fun (host, port) -> Result.map (fun a -> (a, port)) (resolve host)) l

(* [c] with every host resolved, or the first failure. *)
let resolve_all c =
  match resolve_list (addresses c) with
  | Error e -> Error e
  | Ok listen -> (
      let c = { c with listen; host = fst (List.hd listen) } in
      match c.tls with
      | None -> Ok c
      | Some t -> (
          match resolve_list t.redirect_http with
          | Error e -> Error e
          | Ok redirect_http -> Ok { c with tls = Some { t with redirect_http } }))

(* [c] with the ports the sockets were bound to (port 0: a free one). *)
let bound_ports c lfds =
  let ports = List.map Syscall.local_port lfds in
  let n = List.length (addresses c) in
  let listen = List.mapi (fun i (h, _) -> (h, List.nth ports i)) (addresses c) in
  let tls =
    Option.map
      (fun t ->
        { t with redirect_http = List.mapi (fun i (h, _) -> (h, List.nth ports (n + i))) t.redirect_http })
      c.tls
  in
  { c with listen; port = snd (List.hd listen); tls }

(* The TLS context, made by the process that keeps its privileges (the key
   may be readable by root alone) before the workers fork (every
   generation shares the ticket secret drawn here). *)
let load_tls c =
  match c.tls with
  | None -> Ok None
  | Some t -> (
      match Openssl.init_tickets ~period:t.ticket_period with
      | Error e -> Error ("tls: " ^ e)
      | Ok () -> (
          match Tls.load ~cert_file:t.cert_file ~key_file:t.key_file with
          | Ok s -> Ok (Some s)
          | Error e -> Error ("tls: " ^ e)))

let run c handler =
  let fail fmt = Printf.ksprintf (fun s -> Log.msg "%s" s; 1) fmt in
  let c =
    if c.listen_fds = [] then Ok c
    else
      match inherit_listeners c.listen_fds with
      | Ok listen -> Ok { c with listen }
      | Error e -> Error ("inherited socket: " ^ e)
  in
  match Result.bind c (fun c -> Result.map (fun () -> c) (check c)) with
  | Error msg -> fail "%s" msg
  | Ok c -> (
      match resolve_all c with
      | Error msg -> fail "%s" msg
      | Ok c ->
      Syscall.ignore_sigpipe ();
      let nofile = Syscall.raise_nofile_limit () in
      let workers = if c.workers <= 0 then cpu_count () else c.workers in
      let max_connections =
        if c.max_connections > 0 then c.max_connections
        else
          let nofile = if nofile > 0 then nofile else 1024 in
          max 1 (min max_default_connections (nofile - min fd_reserve (nofile / 2)))
      in
      let c = { c with workers; max_connections } in
      match lookup_user c.user with
      | Error msg -> fail "%s" msg
      | Ok user ->
      (* Blocked before any fork or signalfd, so no signal is lost in
         between; restored on the way out. *)
      let old_mask = Unix.sigprocmask Unix.SIG_BLOCK (Sys.sigchld :: server_signals) in
      Fun.protect
        ~finally:(fun () -> ignore (Unix.sigprocmask Unix.SIG_SETMASK old_mask : int list))
        (fun () ->
          match load_tls c with
          | Error msg -> fail "%s" msg
          | Ok tls -> (
          match open_listeners c with
          | Error msg -> fail "%s" msg
          | Ok lfds -> (
            match open_access_log c.access_log with
            | Error msg ->
                close_all lfds;
                fail "access log: %s" msg
            | Ok log_fd ->
                let c = bound_ports c lfds in
                let ktls = match tls with Some s -> s.Tls.ktls | None -> false in
                let announce () =
                  c.on_listen c.port;
                  start_line c workers ~ktls
                in
                (* One worker in this very process, as the caller, where no
                   privileges are to be dropped: SIGHUP reloads in place. *)
                if workers = 1 && user = None then begin
                  announce ();
                  let code = serve_here c handler tls lfds ~log_fd in
                  if log_fd > 2 then ignore (Syscall.close log_fd : int);
                  code
                end
                else begin
                  let log_fd = ref log_fd in
                  let code =
                    Supervisor.run ~workers ~user ~listeners:lfds ~announce
                      ~serve:(fun ~lfds -> serve_here c handler tls lfds ~log_fd:!log_fd)
                      ~reload:(fun () -> reload c tls log_fd)
                  in
                  if !log_fd > 2 then ignore (Syscall.close !log_fd : int);
                  code
                end))))
