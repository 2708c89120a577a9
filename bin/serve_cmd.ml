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

let tls_config hosts t =
  match t with
  | { cert = None; key = None; redirect_http = None; hsts = None; _ } -> Ok None
  | { cert = Some cert_file; key = Some key_file; redirect_http; hsts; ticket_rotation } ->
      if (match redirect_http with Some p -> p < 0 || p > 65535 | None -> false) then
        Error "--redirect-http: port out of range (0-65535)"
      else if (match hsts with Some n -> n < 0 | None -> false) then
        Error "--hsts must not be negative"
      else if ticket_rotation < 1 then Error "--tls-ticket-rotation must be at least 1"
      else
        (* The redirect listens on every host the server listens on. *)
        let redirect_http = match redirect_http with Some p -> List.map (fun h -> (h, p)) hosts | None -> [] in
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
           ~doc:"The certificate's PEM private key (RSA or ECDSA, not encrypted). Read by the \
                 supervisor, which keeps root under $(b,--user), at start and on SIGHUP: it may \
                 be readable by root alone.")

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

(* {1 Where to listen} --listen, with -p and --host as the shorthand for
   one more address, or the sockets systemd hands over. *)

type listen_options = { listen : string list; port : int option; host : string option }

(* The addresses to bind, and the sockets handed over (then no address). *)
let listen_config l =
  match Server.systemd_listen_fds () with
  | Error e -> Error e
  | Ok (_ :: _ as fds) ->
      if l.listen <> [] || l.port <> None || l.host <> None then
        Error
          (Printf.sprintf
             "--listen, --port and --host cannot be used with the %d socket(s) systemd passed \
              (LISTEN_FDS): the unit's .socket file says where to listen"
             (List.length fds))
      else Ok ([], fds)
  | Ok [] -> (
      let short =
        match l.port, l.host with
        | None, None when l.listen <> [] -> Ok []
        | port, host ->
            let port = Option.value port ~default:8080 and host = Option.value host ~default:"127.0.0.1" in
            if port < 0 || port > 65535 then Error (Printf.sprintf "port %d is out of range (0-65535)" port)
            else if host = "" then Error "--host must not be empty"
            else Ok [ (host, port) ]
      in
      match short with
      | Error e -> Error e
      | Ok short ->
          let rec parse acc = function
            | [] -> Ok (List.rev acc)
            | a :: rest -> (
                match Server.parse_listen a with
                | Ok hp -> parse (hp :: acc) rest
                | Error e -> Error ("--listen " ^ e))
          in
          Result.map (fun l -> (short @ l, [])) (parse [] l.listen))

let listen =
  Arg.(value & opt_all string []
       & info [ "listen" ] ~docv:"ADDR:PORT"
           ~doc:"Listen on $(i,ADDR:PORT); repeat it for several addresses (every worker accepts \
                 on all). $(i,ADDR) is an IPv4 address, a host name (resolved at start to its \
                 first address) or an IPv6 address in brackets ($(b,[::1]:8080), $(b,[::]:443)); \
                 $(b,:PORT) means every IPv4 interface. An IPv6 socket serves IPv6 only, so \
                 $(b,--listen 0.0.0.0:80 --listen [::]:80) serves both families. With \
                 $(b,--tls-cert) every address serves HTTPS. Under systemd socket activation \
                 (LISTEN_FDS, LISTEN_PID) the sockets passed from fd 3 on are served instead, \
                 and this option, $(b,--port) and $(b,--host) are refused.")

let port =
  Arg.(value & opt (some int) None
       & info [ "p"; "port" ] ~docv:"PORT"
           ~doc:"TCP port to listen on (0 picks a free one): with $(b,--host), a shorthand for \
                 one more $(b,--listen HOST:PORT). Default: 8080 on 127.0.0.1 when no \
                 $(b,--listen) is given.")

let host =
  Arg.(value & opt (some string) None
       & info [ "host" ] ~docv:"ADDR"
           ~doc:"Address to listen on: IPv4, IPv6 or a host name ($(b,localhost)); \
                 $(b,0.0.0.0) for every interface. With $(b,--port), a shorthand for one more \
                 $(b,--listen). Default: 127.0.0.1.")

let listen_term =
  Term.(const (fun listen port host -> { listen; port; host }) $ listen $ port $ host)

(* {1 Response headers} --header, added to every response. *)

(* Fields the server or the handler writes itself: a second copy would
   contradict it (framing) or duplicate it. *)
let managed_headers =
  [ "content-length"; "transfer-encoding"; "connection"; "keep-alive"; "upgrade"; "te";
    "trailer"; "date"; "server"; "content-type"; "content-encoding"; "content-range"; "etag";
    "last-modified"; "accept-ranges"; "vary"; "location"; "allow" ]

let parse_header h =
  match String.index_opt h ':' with
  | None -> Error (Printf.sprintf "--header %S: give 'Name: value'" h)
  | Some i ->
      let name = String.sub h 0 i in
      let value = String.trim (String.sub h (i + 1) (String.length h - i - 1)) in
      if name = "" || not (String.for_all Httpz.Charset.is_tchar name) then
        Error (Printf.sprintf "--header %S: the name must be a token (letters, digits, !#$%%&'*+-.^_`|~)" h)
      else if not (Httpz.Response.is_field_value value) then
        Error (Printf.sprintf "--header %S: the value must not hold CR, LF or NUL" h)
      else if List.mem (String.lowercase_ascii name) managed_headers then
        Error (Printf.sprintf "--header %S: %s is written by the server itself" h name)
      else Ok (name, value)

(* The defaults ([nosniff]) with the given fields added; a given field
   replaces a default of the same name. *)
let headers_config ~max_age ~hsts given =
  let rec parse acc = function
    | [] -> Ok (List.rev acc)
    | h :: rest -> ( match parse_header h with Ok f -> parse (f :: acc) rest | Error e -> Error e)
  in
  match parse [] given with
  | Error e -> Error e
  | Ok fields ->
      let named n = List.exists (fun (m, _) -> String.lowercase_ascii m = n) fields in
      if max_age && named "cache-control" then
        Error "--header Cache-Control and --max-age both set Cache-Control: give one"
      else if hsts && named "strict-transport-security" then
        Error "--header Strict-Transport-Security and --hsts both set it: give one"
      else
        Ok
          (List.filter (fun (n, _) -> not (named (String.lowercase_ascii n))) Server.default_config.headers
           @ fields)

let header =
  Arg.(value & opt_all string []
       & info [ "header" ] ~docv:"'NAME: VALUE'"
           ~doc:"Add this header field to every response (files, redirects, errors); repeat it \
                 for several. The name must be a token and the value must hold no CR, LF or \
                 NUL. A field named like a default one ($(b,X-Content-Type-Options: nosniff)) \
                 replaces it; fields the server writes itself (Content-Type, ETag, Vary, …) are \
                 refused. All of them, with the Server line and $(b,--hsts), may take at most \
                 8192 bytes (half the 16 KiB response buffer).")

(* {1 Content} --default-type, --error-page. *)

type content_options = { default_type : string option; error_pages : string list }

let content_config c =
  let rec pages acc = function
    | [] -> Ok (List.rev acc)
    | p :: rest -> (
        match String.index_opt p '=' with
        | None -> Error (Printf.sprintf "--error-page %S: give CODE=PATH" p)
        | Some i -> (
            let code = String.sub p 0 i and path = String.sub p (i + 1) (String.length p - i - 1) in
            match int_of_string_opt code with
            | Some n when String.length code = 3 && String.for_all (fun ch -> ch >= '0' && ch <= '9') code ->
                if path = "" || String.contains path '\000' then
                  Error (Printf.sprintf "--error-page %S: give a file path after '='" p)
                else if List.mem_assoc n acc then
                  Error (Printf.sprintf "--error-page: %d is given twice" n)
                else pages ((n, path) :: acc) rest
            | _ -> Error (Printf.sprintf "--error-page %S: %S is not a status code" p code)))
  in
  match c.default_type with
  | Some ty when not (Httpz_static.Mime.is_type ty) ->
      Error (Printf.sprintf "--default-type %S: not a media type (type/subtype[; parameters])" ty)
  | _ -> Result.map (fun p -> (c.default_type, p)) (pages [] c.error_pages)

let default_type =
  Arg.(value & opt (some string) None
       & info [ "default-type" ] ~docv:"TYPE"
           ~doc:"Content-Type of files without an extension or with an unknown one, sent as \
                 given (e.g. $(b,'text/plain; charset=utf-8')). Default: \
                 application/octet-stream.")

let error_page =
  Arg.(value & opt_all string []
       & info [ "error-page" ] ~docv:"CODE=PATH"
           ~doc:"Answer status $(i,CODE) with the file $(i,PATH) of the served directory instead \
                 of the built-in page, keeping the status; repeatable. $(i,CODE) is one the \
                 server answers with a page: 400, 403, 404, 405, 412, 414, 416, 500, 503. \
                 $(i,PATH) is opened beneath the directory like any request (openat2 \
                 RESOLVE_BENEATH, dotfiles hidden) and must be a regular file at start; if it \
                 is gone later, the built-in page is sent.")

let content_term =
  Term.(const (fun default_type error_pages -> { default_type; error_pages }) $ default_type $ error_page)

(* {1 Compression} --compress. *)

type compress_options = { compress : bool; compress_level : int }

let compress_config c =
  if c.compress_level < 1 || c.compress_level > 9 then Error "--compress-level must be between 1 and 9"
  else Ok c

let compress =
  Arg.(value & flag
       & info [ "compress" ]
           ~doc:"Compress answers with gzip on the fly for clients that accept it \
                 (Accept-Encoding, with q-values), for compressible types (text/*, JavaScript, \
                 JSON, XML, SVG, WebAssembly, icons) without a precompressed $(i,FILE).gz: \
                 each cached file ($(b,--cache-max-file)) is compressed once per version and \
                 worker, and kept beside it in the cache; larger files are sent as they are. \
                 Range requests get the uncompressed file. The compressed answer has its own \
                 ETag and Vary: Accept-Encoding. Off by default.")

let compress_level =
  Arg.(value & opt int 6
       & info [ "compress-level" ] ~docv:"N" ~doc:"zlib compression level for $(b,--compress), 1 (fastest) to 9 (smallest).")

let compress_term =
  Term.(const (fun compress compress_level -> { compress; compress_level }) $ compress $ compress_level)

(* {1 Access log} --access-log, --log-format. *)

type log_options = { access_log : string option; log_format : string option }

let log_config l =
  match l.log_format with
  | None -> Ok Httpz_server.Access_log.Common
  | Some _ when l.access_log = None -> Error "--log-format needs --access-log"
  | Some "common" -> Ok Httpz_server.Access_log.Common
  | Some "combined" -> Ok Httpz_server.Access_log.Combined
  | Some "json" -> Ok Httpz_server.Access_log.Json
  | Some f -> Error (Printf.sprintf "--log-format %S: give common, combined or json" f)

let log_format =
  Arg.(value & opt (some string) None
       & info [ "log-format" ] ~docv:"FORMAT"
           ~doc:"The access log's format: $(b,common) (Common Log Format, the default), \
                 $(b,combined) (adds the quoted Referer and User-Agent) or $(b,json) (one object \
                 per line). Every format ends with the request time in microseconds. \
                 Common and combined escape double quotes, backslashes and bytes outside \
                 printable ASCII as \\\\xHH (as nginx does), JSON as \\\\u00HH.")

let run io pos_dir dir workers max_age list stats max_connections dotfiles
    no_symlinks no_gzip idle_timeout header_timeout write_timeout cache_max_file cache_size
    send_lowat no_defer_accept user grace list_max tls_opts listen_opts headers content compression
    log_opts =
  let root =
    match pos_dir, dir with
    | Some a, Some b when a <> b -> Error ()
    | Some d, _ | None, Some d -> Ok d
    | None, None -> Ok "."
  in
  match root with
  | Error () -> usage_error "the directory is given twice (DIR and --dir): give it once"
  | Ok root ->
    if (match workers with Some n -> n < 1 | None -> false) then
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
      (* Each group of options is checked together; the first problem
         found is the one reported. *)
      let ( let* ) r f = match r with Error msg -> usage_error "%s" msg | Ok v -> f v in
      let* listen, listen_fds = listen_config listen_opts in
      let* tls =
        if listen_fds <> [] && tls_opts.redirect_http <> None then
          Error "--redirect-http cannot be used with sockets passed by systemd: pass its socket too"
        else tls_config (List.sort_uniq compare (List.map fst listen)) tls_opts
      in
      let* headers = headers_config ~max_age:(max_age <> None) ~hsts:(tls_opts.hsts <> None) headers in
      let* default_type, error_pages = content_config content in
      let* compression = compress_config compression in
      let* log_format = log_config log_opts in
      let* static =
        Static.create
          { Static.default_config with
            root; list_directories = list; list_max;
            max_age = (match max_age with Some n -> n | None -> -1);
            dotfiles; follow_symlinks = not no_symlinks; gzip_static = not no_gzip;
            cache_max_file; cache_bytes = cache_size;
            default_type = Option.value default_type ~default:Static.default_config.default_type;
            error_pages; compress = compression.compress; compress_level = compression.compress_level }
      in
      let config =
        { Server.default_config with
          io; listen; listen_fds;
          workers = (match workers with Some n -> n | None -> Server.cpu_count ());
          stats; access_log = log_opts.access_log; log_format; max_connections; idle_timeout;
          header_timeout; write_timeout; send_lowat; defer_accept = not no_defer_accept;
          root = Some root; user; grace_period = grace; tls; headers }
      in
      (* What only the whole configuration tells (the headers against the
         write buffer): refused here, with exit 2, like any bad option. *)
      let* () = Server.check config in
      Server.run config (Static.handler static)

let pos_dir =
  Arg.(value & pos 0 (some string) None
       & info [] ~docv:"DIR" ~doc:"Directory to serve (the same as $(b,--dir)).")

let dir =
  Arg.(value & opt (some string) None
       & info [ "d"; "dir" ] ~docv:"DIR" ~doc:"Directory to serve. Default: the current directory.")

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
           ~doc:"Append an access log to $(i,FILE) ($(b,-): standard output), in \
                 $(b,--log-format), reopened on SIGHUP (by the supervisor, as root under \
                 $(b,--user)). Default: no access log.")

let log_term =
  Term.(const (fun access_log log_format -> { access_log; log_format }) $ access_log $ log_format)

let stats =
  Arg.(value & opt (some string) None
       & info [ "stats-token" ] ~docv:"TOKEN"
           ~env:(Cmd.Env.info "HTTPZ_STATS_TOKEN")
           ~doc:"Answer $(b,GET /__httpz/stats) with the worker's request and allocation counters \
                 (JSON) when the request carries $(b,Authorization: Bearer) $(i,TOKEN); without it \
                 the path is served like any other. The token is the only allow (behind a reverse \
                 proxy on the same host every client comes from the loopback). Prefer the \
                 environment variable: arguments are visible to every local user.")

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
           ~doc:"Workers run as user $(i,NAME): each takes its groups and ids (initgroups, \
                 setgid, setuid, checked) right after fork, so they read only what $(i,NAME) may. \
                 The supervisor (always there with this option, even with $(b,--workers 1)) \
                 keeps root and serves nothing: on SIGHUP it reopens the access log and reads the \
                 TLS key as at start. Without it, a server started as root warns that it serves \
                 as root.")

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
    `P "For operators: several listening addresses ($(b,--listen), IPv4 and IPv6), systemd \
        socket activation, extra response headers ($(b,--header)), custom error pages \
        ($(b,--error-page)), a default type ($(b,--default-type)), common, combined or JSON \
        access logs ($(b,--log-format)) and gzip on the fly ($(b,--compress)).";
    `S Manpage.s_environment;
    `P "$(b,LISTEN_FDS), $(b,LISTEN_PID): systemd socket activation (sd_listen_fds(3)). When \
        LISTEN_PID is this process, the LISTEN_FDS listening TCP sockets from fd 3 on are \
        served instead of binding any address; $(b,--listen), $(b,--port) and $(b,--host) are \
        then refused. The variables are cleared for child processes.";
    `S Manpage.s_exit_status;
    `P "0 after a graceful shutdown (SIGTERM or SIGINT). 1 when the server could not start \
        (address in use, ...). 2 for an invalid option value (missing directory, port out of \
        range). 124 for a command line cmdliner cannot parse.";
    `S "SIGNALS";
    `P "SIGTERM, SIGINT: stop accepting, let responses in progress finish (at most \
        $(b,--grace) seconds), exit 0. SIGHUP: the supervisor reopens the access log at its \
        path (after logrotate moved it) and reads the TLS certificate and key again, then \
        starts new workers on the same sockets and lets the previous ones finish their \
        requests (a download in progress is not cut; SIGTERM then gives them $(b,--grace) \
        seconds): no client is refused. On an error (a \
        broken certificate) it logs one line and nothing changes. A single worker without \
        $(b,--user) has no supervisor and reloads in place.";
    `S Manpage.s_examples;
    `Pre "httpz serve examples/site -p 8080 --max-age 60 --list";
    `Pre "httpz serve /var/www -p 443 --host 0.0.0.0 --tls-cert fullchain.pem --tls-key privkey.pem --redirect-http 80 --hsts 31536000 --user www-data";
    `Pre "httpz serve /var/www --listen 0.0.0.0:80 --listen '[::]:80' --compress --header 'X-Frame-Options: DENY' --error-page 404=/errors/404.html --access-log /var/log/httpz/access.log --log-format json --user www-data";
  ] in
  Cmd.v (Cmd.info "serve" ~doc ~man ~exits:[])
    Term.(const run $ io $ pos_dir $ dir $ workers $ max_age $ list $ stats
          $ max_connections $ dotfiles $ no_symlinks $ no_gzip $ idle_timeout $ header_timeout
          $ write_timeout $ cache_max_file $ cache_size $ send_lowat $ no_defer_accept $ user
          $ grace $ list_max $ tls_term $ listen_term $ header $ content_term $ compress_term
          $ log_term)

let cmds : int Cmd.t list = [ serve_cmd ]
