(* `httpz serve`: the static file server. Options map one to one onto
   [Httpz_server.Static.config] and [Httpz_server.Server.config]; this file
   only parses and validates them. *)

open Cmdliner
module Server = Httpz_server.Server
module Static = Httpz_static.Static

(* Problems with option values (a missing directory, a port out of range)
   exit 2 with one line on stderr, never a backtrace. Cmdliner itself
   answers malformed syntax (a non-number for --port) with its own usage
   message and status 124. *)
let usage_error fmt =
  Printf.ksprintf (fun msg -> Printf.eprintf "httpz serve: %s\nTry 'httpz serve --help'.\n%!" msg; 2) fmt

(* {1 HTTPS} One term for the TLS options, checked together. *)

type tls_options = {
  cert : string option;
  key : string option;
  redirect_http : int option;
  hsts : int option;
  ticket_rotation : int;
}

let tls_config host t =
  match t with
  | { cert = None; key = None; redirect_http = None; hsts = None; _ } -> Ok None
  | { cert = Some cert_file; key = Some key_file; redirect_http; hsts; ticket_rotation } ->
      if (match redirect_http with Some p -> p < 0 || p > 65535 | None -> false) then
        Error "--redirect-http: port out of range (0-65535)"
      else if (match hsts with Some n -> n < 0 | None -> false) then
        Error "--hsts must not be negative"
      else if ticket_rotation < 1 then Error "--tls-ticket-rotation must be at least 1"
      else
        let redirect_http = match redirect_http with Some p -> [ (host, p) ] | None -> [] in
        Ok
          (Some
             { (Server.tls ~cert_file ~key_file) with
               hsts; redirect_http; ticket_period = ticket_rotation })
  | { cert = None; key = Some _; _ } | { cert = Some _; key = None; _ } ->
      Error "--tls-cert and --tls-key go together"
  | { cert = None; key = None; _ } -> Error "--redirect-http and --hsts need --tls-cert and --tls-key"

let tls_cert =
  Arg.(value & opt (some file) None
       & info [ "tls-cert" ] ~docv:"FILE"
           ~doc:"Serve HTTPS with this PEM certificate chain (leaf first, as Let's Encrypt's \
                 fullchain.pem): TLS 1.2 and 1.3, Mozilla intermediate ciphers, ALPN http/1.1, \
                 session tickets shared by the workers. Needs $(b,--tls-key).")

let tls_key =
  Arg.(value & opt (some file) None
       & info [ "tls-key" ] ~docv:"FILE"
           ~doc:"The certificate's PEM private key (RSA or ECDSA, not encrypted). Read before \
                 $(b,--user) takes effect; SIGHUP reads certificate and key again as that user.")

let redirect_http =
  Arg.(value & opt (some int) None
       & info [ "redirect-http" ] ~docv:"PORT"
           ~doc:"Also listen for plain HTTP on $(i,PORT) and answer every request with 301 to \
                 the same host and path over https.")

let hsts =
  Arg.(value & opt (some int) None
       & info [ "hsts" ] ~docv:"SECONDS"
           ~doc:"Send $(b,Strict-Transport-Security: max-age=)$(i,SECONDS) on every https response.")

let ticket_rotation =
  Arg.(value & opt int 3600
       & info [ "tls-ticket-rotation" ] ~docv:"SECONDS"
           ~doc:"Rotate the session-ticket key every $(i,SECONDS): a ticket resumes a session \
                 for one to two such periods, on any worker.")

let tls_term =
  Term.(const (fun cert key redirect_http hsts ticket_rotation ->
            { cert; key; redirect_http; hsts; ticket_rotation })
        $ tls_cert $ tls_key $ redirect_http $ hsts $ ticket_rotation)

let io =
  Arg.(value & opt (enum [ ("uring", Server.Uring); ("epoll", Server.Epoll) ]) Server.default_config.io
       & info [ "io" ] ~docv:"BACKEND"
           ~doc:"How workers wait for and move bytes: $(b,uring) (io_uring: a loop turn's reads \
                 and writes in one system call; epoll is used instead, with a line in the log, \
                 where the kernel refuses io_uring) or $(b,epoll).")

let run io pos_dir dir port host workers max_age list access_log stats max_connections dotfiles
    no_symlinks no_gzip idle_timeout header_timeout write_timeout cache_max_file cache_size
    send_lowat no_defer_accept user grace list_max tls =
  let root =
    match pos_dir, dir with
    | Some a, Some b when a <> b -> Error ()
    | Some d, _ | None, Some d -> Ok d
    | None, None -> Ok "."
  in
  match root with
  | Error () -> usage_error "the directory is given twice (DIR and --dir): give it once"
  | Ok root ->
    if port < 0 || port > 65535 then usage_error "port %d is out of range (0-65535)" port
    else if host = "" then usage_error "--host must not be empty"
    else if (match workers with Some n -> n < 1 | None -> false) then
      usage_error "--workers must be at least 1"
    else if (match max_age with Some n -> n < 0 | None -> false) then
      usage_error "--max-age must not be negative"
    else if max_connections < 0 then usage_error "--max-connections must not be negative"
    else if not (idle_timeout > 0.) then usage_error "--idle-timeout must be positive"
    else if not (header_timeout > 0.) then usage_error "--header-timeout must be positive"
    else if not (write_timeout > 0.) then usage_error "--write-timeout must be positive"
    else if cache_max_file < 0 then usage_error "--cache-max-file must not be negative"
    else if cache_size < 0 then usage_error "--cache-size must not be negative"
    else if send_lowat < 0 || send_lowat > 0x3fff_ffff then
      usage_error "--send-lowat must be between 0 and 1073741823"
    else if not (grace >= 0.) then usage_error "--grace must not be negative"
    else if list_max < 1 then usage_error "--list-max must be at least 1"
    else if (match user with Some u -> (try ignore (Unix.getpwnam u); false with Not_found -> true) | None -> false)
    then usage_error "--user %s: no such user" (Option.get user)
    else
      match tls_config host tls with
      | Error msg -> usage_error "%s" msg
      | Ok tls ->
      match
        Static.create
          { Static.default_config with
            root; list_directories = list; list_max;
            max_age = (match max_age with Some n -> n | None -> -1);
            dotfiles; follow_symlinks = not no_symlinks; gzip_static = not no_gzip;
            cache_max_file; cache_bytes = cache_size }
      with
      | Error msg -> usage_error "%s" msg
      | Ok static ->
        let config =
          { Server.default_config with
            io; host; port;
            workers = (match workers with Some n -> n | None -> Server.cpu_count ());
            stats; access_log; max_connections; idle_timeout; header_timeout; write_timeout;
            send_lowat; defer_accept = not no_defer_accept; root = Some root; user;
            grace_period = grace; tls }
        in
        Server.run config (Static.handler static)

let pos_dir =
  Arg.(value & pos 0 (some string) None
       & info [] ~docv:"DIR" ~doc:"Directory to serve (the same as $(b,--dir)).")

let dir =
  Arg.(value & opt (some string) None
       & info [ "d"; "dir" ] ~docv:"DIR" ~doc:"Directory to serve. Default: the current directory.")

let port =
  Arg.(value & opt int 8080
       & info [ "p"; "port" ] ~docv:"PORT" ~doc:"TCP port to listen on (0 picks a free one).")

let host =
  Arg.(value & opt string "127.0.0.1"
       & info [ "host" ] ~docv:"ADDR"
           ~doc:"Address to listen on: IPv4, IPv6 or a host name ($(b,localhost)); \
                 $(b,0.0.0.0) for every interface.")

let workers =
  Arg.(value & opt (some int) None
       & info [ "workers" ] ~docv:"N"
           ~doc:"Worker processes sharing the listening socket. Default: the number of CPUs.")

let max_age =
  Arg.(value & opt (some int) None
       & info [ "max-age" ] ~docv:"SECONDS"
           ~doc:"Send $(b,Cache-Control: max-age=)$(i,SECONDS) with files. Default: no Cache-Control.")

let list =
  Arg.(value & flag
       & info [ "list" ] ~doc:"List directories that have no index.html (otherwise 403).")

let access_log =
  Arg.(value & opt (some string) None
       & info [ "access-log" ] ~docv:"FILE"
           ~doc:"Append an access log in Common Log Format to $(i,FILE) ($(b,-): standard output), \
                 reopened on SIGHUP. Default: no access log.")

let stats =
  Arg.(value & flag
       & info [ "stats" ]
           ~doc:"Answer $(b,GET /__httpz/stats) with the worker's request and allocation counters (JSON).")

let max_connections =
  Arg.(value & opt int Server.default_config.max_connections
       & info [ "max-connections" ] ~docv:"N"
           ~doc:"Open connections per worker; at the limit the connection idle longest makes room \
                 for a new client. 0 (the default): the descriptor limit, raised to its hard \
                 limit, less 64, at most 65536.")

let dotfiles =
  Arg.(value & flag
       & info [ "dotfiles" ]
           ~doc:"Serve files and directories whose name starts with a dot (by default they answer 404, \
                 except $(b,.well-known)).")

let no_symlinks =
  Arg.(value & flag
       & info [ "no-symlinks" ]
           ~doc:"Refuse (404) any path through a symlink. Symlinks leading out of the directory are \
                 always refused.")

let no_gzip =
  Arg.(value & flag
       & info [ "no-gzip-static" ]
           ~doc:"Never serve precompressed $(i,FILE).gz sidecars.")

let idle_timeout =
  Arg.(value & opt float Server.default_config.idle_timeout
       & info [ "idle-timeout" ] ~docv:"SECONDS" ~doc:"How long a keep-alive connection may stay idle.")

let header_timeout =
  Arg.(value & opt float Server.default_config.header_timeout
       & info [ "header-timeout" ] ~docv:"SECONDS"
           ~doc:"How long a client may take to send a request head once it started.")

let write_timeout =
  Arg.(value & opt float Server.default_config.write_timeout
       & info [ "write-timeout" ] ~docv:"SECONDS"
           ~doc:"How long a response may make no progress because the client does not read \
                 before the connection is closed.")

let cache_max_file =
  Arg.(value & opt int Static.default_config.cache_max_file
       & info [ "cache-max-file" ] ~docv:"BYTES"
           ~doc:"Files up to this size are kept in memory and answered without touching the \
                 file system (re-checked every second, so a change shows within a second); \
                 larger ones are sent with sendfile. 0 disables the cache.")

let cache_size =
  Arg.(value & opt int Static.default_config.cache_bytes
       & info [ "cache-size" ] ~docv:"BYTES" ~doc:"Memory for cached files, per worker.")

let send_lowat =
  Arg.(value & opt int Server.default_config.send_lowat
       & info [ "send-lowat" ] ~docv:"BYTES"
           ~doc:"Unsent bytes a connection may hold in the kernel (TCP_NOTSENT_LOWAT) before \
                 the worker waits for the client to take them: large files go out in slices \
                 as the client reads. 0 leaves the kernel's default.")

let user =
  Arg.(value & opt (some string) None
       & info [ "user" ] ~docv:"NAME"
           ~doc:"Once the port is bound and the access log and the directory are open, run as \
                 user $(i,NAME) (setgroups, setgid, setuid): the workers can read only what \
                 $(i,NAME) may. Without it, a server started as root warns that it serves as root.")

let grace =
  Arg.(value & opt float Server.default_config.grace_period
       & info [ "grace" ] ~docv:"SECONDS"
           ~doc:"On SIGTERM or SIGINT, how long responses in progress (a large download) may \
                 go on before the connections are closed.")

let list_max =
  Arg.(value & opt int Static.default_config.list_max
       & info [ "list-max" ] ~docv:"N"
           ~doc:"Most entries a directory listing ($(b,--list)) reads and shows; a larger \
                 directory's listing says it was cut.")

let no_defer_accept =
  Arg.(value & flag
       & info [ "no-defer-accept" ]
           ~doc:"Accept connections as soon as they are established, not when their first \
                 bytes arrive (TCP_DEFER_ACCEPT, on by default).")

let serve_cmd =
  let doc = "serve a directory over HTTP/1.1" in
  let man = [
    `S Manpage.s_description;
    `P "Serves the files under $(i,DIR) with GET and HEAD: ETag and Last-Modified validators, \
        conditional requests (304/412), byte ranges (206, multipart/byteranges, 416), \
        precompressed $(i,FILE).gz sidecars for clients that accept gzip, index.html for \
        directories, and optionally directory listings. Paths are opened with openat2 \
        RESOLVE_BENEATH, so the kernel refuses anything outside $(i,DIR).";
    `S Manpage.s_exit_status;
    `P "0 after a graceful shutdown (SIGTERM or SIGINT). 1 when the server could not start \
        (address in use, ...). 2 for an invalid option value (missing directory, port out of \
        range). 124 for a command line cmdliner cannot parse.";
    `S "SIGNALS";
    `P "SIGTERM, SIGINT: stop accepting, let responses in progress finish (at most \
        $(b,--grace) seconds), exit 0. SIGHUP: reopen the access log at its path (after \
        logrotate moved it), read the TLS certificate and key again for new connections, \
        and keep serving.";
    `S Manpage.s_examples;
    `Pre "httpz serve examples/site -p 8080 --max-age 60 --list";
    `Pre "httpz serve /var/www -p 443 --host 0.0.0.0 --user www-data --tls-cert fullchain.pem --tls-key privkey.pem --redirect-http 80 --hsts 31536000";
  ] in
  Cmd.v (Cmd.info "serve" ~doc ~man ~exits:[])
    Term.(const run $ io $ pos_dir $ dir $ port $ host $ workers $ max_age $ list $ access_log $ stats
          $ max_connections $ dotfiles $ no_symlinks $ no_gzip $ idle_timeout $ header_timeout
          $ write_timeout $ cache_max_file $ cache_size $ send_lowat $ no_defer_accept $ user
          $ grace $ list_max $ tls_term)

let cmds : int Cmd.t list = [ serve_cmd ]
