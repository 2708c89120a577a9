(* The options of `httpz serve` that configure the server
   ([Httpz_server.Server.config]): where to listen, HTTPS, response
   headers, the access log, the processes. Each group is one term; its
   [*_config] function turns it into configuration values or the line an
   operator sees. The server's own bounds are left to [Config.check]. *)

open Cmdliner
module Server = Httpz_server.Server

(* {1 HTTPS} One term for the TLS options, checked together. *)

type tls_options = {
  cert : string option;
  key : string option;
  redirect_http : int option;
  listen_plain : string list;
  hsts : int option;
  ticket_rotation : int;
}

(* Each "ADDR:PORT" as [Server.parse_listen] reads it, or the first error
   named by [option]. *)
let parse_addresses option l =
  let rec parse acc = function
    | [] -> Ok (List.rev acc)
    | a :: rest -> (
        match Server.parse_listen a with
        | Ok hp -> parse (hp :: acc) rest
        | Error e -> Error (option ^ " " ^ e))
  in
  parse [] l

let tls_config hosts t =
  match t with
  | { cert = None; key = None; redirect_http = None; listen_plain = []; hsts = None; _ } -> Ok None
  | { cert = Some cert_file; key = Some key_file; redirect_http; listen_plain; hsts; ticket_rotation } ->
      let missing f = not (Sys.file_exists f) in
      if missing cert_file then Error (Printf.sprintf "--tls-cert %s: no such file" cert_file)
      else if missing key_file then Error (Printf.sprintf "--tls-key %s: no such file" key_file)
      else if (match redirect_http with Some p -> p < 0 || p > 65535 | None -> false) then
        Error "--redirect-http: port out of range (0-65535)"
      else
        (* The redirect listens on every host the server listens on. *)
        let redirect_http = match redirect_http with Some p -> List.map (fun h -> (h, p)) hosts | None -> [] in
        Result.map
          (fun listen_plain ->
            Some
              { (Server.tls ~cert_file ~key_file) with
                hsts; redirect_http; listen_plain; ticket_period = ticket_rotation })
          (parse_addresses "--listen-plain" listen_plain)
  | { cert = None; key = Some _; _ } | { cert = Some _; key = None; _ } ->
      Error "--tls-cert and --tls-key go together"
  | { cert = None; key = None; _ } ->
      Error "--redirect-http, --listen-plain and --hsts need --tls-cert and --tls-key"

let tls_cert =
  Arg.(value & opt (some string) None
       & info [ "tls-cert" ] ~docv:"FILE"
           ~doc:"Serve HTTPS with this PEM certificate chain (leaf first, as Let's Encrypt's \
                 fullchain.pem): TLS 1.2 and 1.3, Mozilla intermediate ciphers, ALPN http/1.1, \
                 session tickets shared by the workers. Needs $(b,--tls-key).")

let tls_key =
  Arg.(value & opt (some string) None
       & info [ "tls-key" ] ~docv:"FILE"
           ~doc:"The certificate's PEM private key (RSA or ECDSA, not encrypted). Read by the \
                 supervisor, which keeps root under $(b,--user), at start and on SIGHUP: it may \
                 be readable by root alone.")

let redirect_http =
  Arg.(value & opt (some int) None
       & info [ "redirect-http" ] ~docv:"PORT"
           ~doc:"Also listen for plain HTTP on $(i,PORT) and answer every request with 301 to \
                 the same host and path over https. Under systemd socket activation, the passed \
                 socket on $(i,PORT) redirects (pass it with the HTTPS one); with none on that \
                 port, it is bound on every IPv4 interface.")

let listen_plain =
  Arg.(value & opt_all string []
       & info [ "listen-plain" ] ~docv:"ADDR:PORT"
           ~doc:"With $(b,--tls-cert), also serve the same site in plain HTTP on $(i,ADDR:PORT) \
                 (written as for $(b,--listen); repeat it for several), alongside the HTTPS \
                 $(b,--listen) addresses: $(b,--listen :443 --listen-plain :80). Its responses \
                 never carry $(b,--hsts). Under systemd socket activation, a passed socket on the \
                 port of a $(b,--listen-plain) serves plain HTTP (and the others HTTPS); an \
                 address whose port no passed socket has is bound as usual.")

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
  Term.(const (fun cert key redirect_http listen_plain hsts ticket_rotation ->
            { cert; key; redirect_http; listen_plain; hsts; ticket_rotation })
        $ tls_cert $ tls_key $ redirect_http $ listen_plain $ hsts $ ticket_rotation)


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
      | Ok short -> Result.map (fun l -> (short @ l, [])) (parse_addresses "--listen" l.listen))

let listen =
  Arg.(value & opt_all string []
       & info [ "listen" ] ~docv:"ADDR:PORT"
           ~doc:"Listen on $(i,ADDR:PORT); repeat it for several addresses (every worker accepts \
                 on all). $(i,ADDR) is an IPv4 address, a host name (resolved at start to its \
                 first address) or an IPv6 address in brackets ($(b,[::1]:8080), $(b,[::]:443)); \
                 $(b,:PORT) means every IPv4 interface. An IPv6 socket serves IPv6 only, so \
                 $(b,--listen 0.0.0.0:80 --listen [::]:80) serves both families. With \
                 $(b,--tls-cert) every address serves HTTPS (see $(b,--listen-plain)). Under systemd socket activation \
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
let managed_headers = Httpz_server.Config.managed_headers

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

(* {1 Access log} --access-log, --log-format. *)

type log_options = { access_log : string option; log_format : string option }

let log_config l =
  match l.log_format with
  | None -> Ok Httpz_server.Access_log.Common
  | Some _ when l.access_log = None -> Error "--log-format needs --access-log"
  | Some f -> (
      match Httpz_server.Access_log.format_of_string f with
      | Some f -> Ok f
      | None -> Error (Printf.sprintf "--log-format %S: give %s" f Httpz_server.Access_log.format_names))

let log_format =
  Arg.(value & opt (some string) None
       & info [ "log-format" ] ~docv:"FORMAT"
           ~doc:"The access log's format: $(b,common) (Common Log Format, the default), \
                 $(b,combined) (adds the quoted Referer and User-Agent), $(b,vhost_combined) \
                 (combined with the request's Host first, for one log of several sites) or \
                 $(b,json) (one object per line, with the host, scheme, TLS version and \
                 protocol too). Every format ends with the request time in microseconds. \
                 Common and combined escape double quotes, backslashes and bytes outside \
                 printable ASCII as \\\\xHH (as nginx does), JSON as \\\\u00HH.")

let access_log =
  Arg.(value & opt (some string) None
       & info [ "access-log" ] ~docv:"FILE"
           ~doc:"Append an access log to $(i,FILE) ($(b,-): standard output), in \
                 $(b,--log-format), reopened on SIGHUP (by the supervisor, as root under \
                 $(b,--user)). Default: no access log.")

let log_term =
  Term.(const (fun access_log log_format -> { access_log; log_format }) $ access_log $ log_format)

(* {1 The processes} Workers, limits, timeouts, privileges. *)

type process_options = {
  io : Server.io;
  workers : int option;
  user : string option;
  stats : string option;
  settings : Httpz_server.Config.t -> Httpz_server.Config.t;
}

(* What only the command line bounds ([workers] has no "0: every CPU"
   here; a user is looked up now, to exit 2): the rest is [Config.check]'s. *)
let process_config p =
  if (match p.workers with Some n -> n < 1 | None -> false) then Error "--workers must be at least 1"
  else
    match p.user with
    | Some u when (match Unix.getpwnam u with _ -> false | exception Not_found -> true) ->
        Error (Printf.sprintf "--user %s: no such user" u)
    | _ -> Ok ()

let io =
  Arg.(value & opt (enum [ ("uring", Server.Uring); ("epoll", Server.Epoll) ]) Server.default_config.io
       & info [ "io" ] ~docv:"BACKEND"
           ~doc:"How workers wait for and move bytes: $(b,uring) (io_uring: a loop turn's reads \
                 and writes in one system call; epoll is used instead, with a line in the log, \
                 where the kernel refuses io_uring) or $(b,epoll).")

let workers =
  Arg.(value & opt (some int) None
       & info [ "workers" ] ~docv:"N"
           ~doc:"Worker processes sharing the listening socket. Default: the number of CPUs.")

let user =
  Arg.(value & opt (some string) None
       & info [ "user" ] ~docv:"NAME"
           ~doc:"Workers run as user $(i,NAME): each takes its groups and ids (initgroups, \
                 setgid, setuid, checked) right after fork, so they read only what $(i,NAME) may. \
                 The supervisor (always there with this option, even with $(b,--workers 1)) \
                 keeps root and serves nothing: on SIGHUP it reopens the access log and reads the \
                 TLS key as at start. Without it, a server started as root warns that it serves \
                 as root.")

let stats =
  Arg.(value & opt (some string) None
       & info [ "stats-token" ] ~docv:"TOKEN"
           ~env:(Cmd.Env.info "HTTPZ_STATS_TOKEN")
           ~doc:"Answer $(b,GET /__httpz/stats) with the worker's request and allocation counters \
                 (JSON) when the request carries $(b,Authorization: Bearer) $(i,TOKEN); without it \
                 the path is served like any other. The token is the only allow (behind a reverse \
                 proxy on the same host every client comes from the loopback). Prefer the \
                 environment variable: arguments are visible to every local user.")

(* One option per scalar setting of [Config.settings] that has a flag:
   given, it patches the configuration; absent, the default stays. *)
let setting_term (type a) (s : a Httpz_server.Config.spec) =
  match s.set with
  | Some set when s.flag <> "" -> (
      let option = String.sub s.flag 2 (String.length s.flag - 2) in
      let default = s.get Server.default_config in
      let opt (cv : a Arg.conv) docv (show : a -> string) =
        Term.(const (fun v c -> match v with Some v -> set c v | None -> c)
              $ Arg.(value & opt (some ~none:(show default) cv) None & info [ option ] ~docv ~doc:s.doc))
      in
      match s.kind with
      | Httpz_server.Config.Count -> opt Arg.int "N" string_of_int
      | Bytes -> opt Arg.int "BYTES" string_of_int
      | Seconds -> opt Arg.float "SECONDS" (Printf.sprintf "%g")
      | Switch ->
          (* The flag turns the default over (--no-http2). *)
          Term.(const (fun given c -> if given then set c (not default) else c)
                $ Arg.(value & flag & info [ option ] ~doc:s.doc)))
  | _ -> Term.const Fun.id

let settings_term =
  List.fold_left
    (fun acc (Httpz_server.Config.Setting s) -> Term.(const (fun f g c -> g (f c)) $ acc $ setting_term s))
    (Term.const Fun.id) Httpz_server.Config.settings

let process_term =
  Term.(const (fun io workers user stats settings -> { io; workers; user; stats; settings })
        $ io $ workers $ user $ stats $ settings_term)

(* {1 All of them} *)

type t = {
  process : process_options;
  listen : listen_options;
  tls : tls_options;
  headers : string list;
  log : log_options;
}

let term =
  Term.(const (fun process listen tls headers log -> { process; listen; tls; headers; log })
        $ process_term $ listen_term $ tls_term $ header $ log_term)

(* How [Config.check]'s messages name the fields set by an option. *)
let option_name (Httpz_server.Config.Setting s as setting) =
  if s.flag <> "" then s.flag else Httpz_server.Config.field_name setting

let role_option = function
  | Httpz_server.Config.Serve -> "--listen"
  | Serve_plain -> "--listen-plain"
  | Redirect -> "--redirect-http"
  | Status -> "--stats-listen"

let server_config t ~root ~max_age =
  let ( let* ) = Result.bind in
  let p = t.process in
  let* () = process_config p in
  let* listen, listen_fds = listen_config t.listen in
  let* tls =
    (* Under socket activation the redirect's socket is the passed one on
       its port (Config.inherited_role); with none passed there, it is
       bound on every IPv4 interface. *)
    let hosts = if listen_fds <> [] then [ "0.0.0.0" ] else List.sort_uniq compare (List.map fst listen) in
    tls_config hosts t.tls
  in
  let* headers = headers_config ~max_age ~hsts:(t.tls.hsts <> None) t.headers in
  let* log_format = log_config t.log in
  let config =
    p.settings
      { Server.default_config with
        io = p.io; listen; listen_fds;
        workers = (match p.workers with Some n -> n | None -> Server.cpu_count ());
        stats = p.stats; access_log = t.log.access_log; log_format; root = Some root; user = p.user; tls;
        headers }
  in
  Result.map (fun () -> config) (Httpz_server.Config.check ~name:option_name ~role_name:role_option config)
