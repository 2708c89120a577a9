(* The configuration record, its defaults, the addresses it names and the
   start-up checks; no I/O (Listeners opens the sockets). *)

type tls = {
  cert_file : string;
  key_file : string;
  hsts : int option;
  redirect_http : (string * int) list;
  listen_plain : (string * int) list;
  ticket_period : int;
  sni : (string list * string * string) list;
}

let tls ~cert_file ~key_file =
  { cert_file; key_file; hsts = None; redirect_http = []; listen_plain = []; ticket_period = 3600; sni = [] }

let managed_headers =
  [ "content-length"; "transfer-encoding"; "connection"; "keep-alive"; "upgrade"; "te";
    "trailer"; "date"; "server"; "content-type"; "content-encoding"; "content-range"; "etag";
    "last-modified"; "accept-ranges"; "vary"; "location"; "allow" ]

type io = Epoll | Uring

type t = {
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
  stats_listen : (string * int) list;
  conn_limit : int;
  keepalive_requests : int;
  tls : tls option;
  access_log : string option;
  log_format : Access_log.format;
  error_log : string option;
  log_level : Log.level;
  headers : (string * string) list;
  user : string option;
  server_name : string;
  root : string option;
  on_listen : int -> unit;
  dev_errors : bool;
  errors : Errors.t option;
  http2 : bool;
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
    stats_listen = [];
    conn_limit = 0;
    keepalive_requests = 0;
    access_log = None;
    log_format = Access_log.Common;
    error_log = None;
    log_level = Log.Info;
    tls = None;
    headers = [ ("X-Content-Type-Options", "nosniff") ];
    user = None;
    server_name = "httpz";
    root = None;
    on_listen = ignore;
    dev_errors = false;
    errors = None;
    http2 = true;
  }

(* {1 Addresses} *)

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
  let with_port host p = Result.map (fun n -> (host, n)) (port_of p) in
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

type role = Serve | Serve_plain | Redirect | Status

let roles = [ Serve; Serve_plain; Redirect; Status ]

let role_addresses c = function
  | Serve -> addresses c
  | Serve_plain -> ( match c.tls with Some t -> t.listen_plain | None -> [])
  | Redirect -> ( match c.tls with Some t -> t.redirect_http | None -> [])
  | Status -> c.stats_listen

(* The host and port follow the first address, so that [c.port] is where
   the handler is served ([on_listen]) once port 0 is replaced. *)
let with_role_addresses c role l =
  match (role, c.tls) with
  | Serve, _ -> (
      match l with (host, port) :: _ -> { c with listen = l; host; port } | [] -> { c with listen = l })
  | Serve_plain, Some t -> { c with tls = Some { t with listen_plain = l } }
  | Redirect, Some t -> { c with tls = Some { t with redirect_http = l } }
  | (Serve_plain | Redirect), None -> c
  | Status, _ -> { c with stats_listen = l }

let endpoints c =
  List.concat_map (fun role -> List.map (fun (h, p) -> (h, p, role)) (role_addresses c role)) roles

let role_name = function
  | Serve -> "listen"
  | Serve_plain -> "tls.listen_plain"
  | Redirect -> "tls.redirect_http"
  | Status -> "stats_listen"

let inherited_role c ~port =
  let on role = List.exists (fun (_, p) -> p = port) (role_addresses c role) in
  if on Status then Ok Status
  else
  match (on Serve_plain, on Redirect) with
  | true, true ->
      Error
        (Printf.sprintf "port %d is in both tls.listen_plain and tls.redirect_http: which role its socket has is ambiguous"
           port)
  | true, false -> Ok Serve_plain
  | false, true -> Ok Redirect
  | false, false -> Ok Serve

let url ?(scheme = "http") host port =
  if String.contains host ':' then Printf.sprintf "%s://[%s]:%d" scheme host port
  else Printf.sprintf "%s://%s:%d" scheme host port

let hsts_line c =
  match c.tls with
  | Some { hsts = Some n; _ } -> Printf.sprintf "Strict-Transport-Security: max-age=%d\r\n" n
  | _ -> ""

(* {1 Checks} *)

(* Bytes of the header lines every response head carries whatever the
   handler adds: Server, the configured headers, HSTS. *)
let fixed_head_bytes c =
  List.fold_left
    (fun acc (n, v) -> acc + String.length n + String.length v + 4)
    ((if c.server_name = "" then 0 else String.length "Server: \r\n") + String.length c.server_name + String.length (hsts_line c))
    c.headers

(* {1 Settings} One entry per scalar field: how the command line and the
   configuration file name it, read it, and bound it. *)

type 'a kind = Count : int kind | Bytes : int kind | Seconds : float kind | Switch : bool kind

type 'a spec = {
  field : string;
  flag : string;
  directive : string;
  kind : 'a kind;
  get : t -> 'a;
  set : (t -> 'a -> t) option;
  valid : 'a -> bool;
  bound : string;
  doc : string;
}

type setting = Setting : 'a spec -> setting

let any _ = true
let positive x = x > 0.  (* also refuses nan *)
let not_negative_int n = n >= 0
let tls_int f c = match c.tls with Some t -> f t | None -> 0

let settings =
  [
    Setting { field = "max_connections"; flag = "--max-connections"; directive = "max_connections"; kind = Count;
              get = (fun c -> c.max_connections); set = Some (fun c v -> { c with max_connections = v });
              valid = not_negative_int; bound = "must not be negative";
              doc = "Open connections per worker; at the limit the connection idle longest makes room \
                     for a new client. 0 (the default): the descriptor limit, raised to its hard \
                     limit, less 64, at most 65536." };
    Setting { field = "conn_limit"; flag = "--limit-conn"; directive = "limit_conn"; kind = Count;
              get = (fun c -> c.conn_limit); set = Some (fun c v -> { c with conn_limit = v });
              valid = not_negative_int; bound = "must not be negative";
              doc = "Open connections one client address may hold (counted across the workers); one more is closed as \
                     soon as it is accepted (before any byte is read). 0 (the default): no limit." };
    Setting { field = "keepalive_requests"; flag = "--keepalive-requests"; directive = "keepalive_requests";
              kind = Count; get = (fun c -> c.keepalive_requests);
              set = Some (fun c v -> { c with keepalive_requests = v });
              valid = not_negative_int; bound = "must not be negative";
              doc = "Requests one connection may carry: the answer to the last says Connection: close \
                     (HTTP/1.1) or a GOAWAY ends the connection once its streams are done (HTTP/2). \
                     0 (the default): no limit." };
    Setting { field = "backlog"; flag = "--backlog"; directive = "backlog"; kind = Count;
              get = (fun c -> c.backlog); set = Some (fun c v -> { c with backlog = v });
              valid = (fun n -> n >= 1); bound = "must be at least 1";
              doc = "Connections the kernel queues on a listening socket before a worker accepts \
                     them (listen(2)'s backlog, capped by net.core.somaxconn)." };
    Setting { field = "read_buffer"; flag = ""; directive = ""; kind = Bytes; get = (fun c -> c.read_buffer);
              set = Some (fun c v -> { c with read_buffer = v }); valid = (fun n -> n >= 1024);
              bound = "must be at least 1024 bytes"; doc = "" };
    Setting { field = "write_buffer"; flag = ""; directive = ""; kind = Bytes; get = (fun c -> c.write_buffer);
              set = Some (fun c v -> { c with write_buffer = v }); valid = (fun n -> n >= 1024);
              bound = "must be at least 1024 bytes"; doc = "" };
    Setting { field = "max_body"; flag = "--max-body"; directive = "max_body"; kind = Bytes;
              get = (fun c -> c.max_body); set = Some (fun c v -> { c with max_body = v });
              valid = not_negative_int; bound = "must not be negative";
              doc = "Largest request body a handler reads whole, in bytes; above it the answer is 413." };
    Setting { field = "offload_threads"; flag = ""; directive = ""; kind = Count; get = (fun c -> c.offload_threads);
              set = Some (fun c v -> { c with offload_threads = v }); valid = (fun n -> n >= 1);
              bound = "must be at least 1"; doc = "" };
    Setting { field = "offload_queue"; flag = ""; directive = ""; kind = Count; get = (fun c -> c.offload_queue);
              set = Some (fun c v -> { c with offload_queue = v }); valid = not_negative_int;
              bound = "must not be negative"; doc = "" };
    Setting { field = "idle_timeout"; flag = "--idle-timeout"; directive = "idle_timeout"; kind = Seconds;
              get = (fun c -> c.idle_timeout); set = Some (fun c v -> { c with idle_timeout = v });
              valid = positive; bound = "must be positive"; doc = "How long a keep-alive connection may stay idle." };
    Setting { field = "header_timeout"; flag = "--header-timeout"; directive = "header_timeout"; kind = Seconds;
              get = (fun c -> c.header_timeout); set = Some (fun c v -> { c with header_timeout = v });
              valid = positive; bound = "must be positive";
              doc = "How long a client may take to send a request head once it started." };
    Setting { field = "body_timeout"; flag = "--body-timeout"; directive = "body_timeout"; kind = Seconds;
              get = (fun c -> c.body_timeout); set = Some (fun c v -> { c with body_timeout = v });
              valid = positive; bound = "must be positive";
              doc = "How long a request body may take once the handler asked for it, moved later as \
                     data arrives at 1 KiB/s or more; then 408." };
    Setting { field = "write_timeout"; flag = "--write-timeout"; directive = "write_timeout"; kind = Seconds;
              get = (fun c -> c.write_timeout); set = Some (fun c v -> { c with write_timeout = v });
              valid = positive; bound = "must be positive";
              doc = "How long a response may make no progress because the client does not read \
                     before the connection is closed." };
    Setting { field = "handler_timeout"; flag = "--handler-timeout"; directive = "handler_timeout"; kind = Seconds;
              get = (fun c -> c.handler_timeout); set = Some (fun c v -> { c with handler_timeout = v });
              valid = positive; bound = "must be positive";
              doc = "How long a handler may wait at once (suspended, sleeping, offloaded) before the \
                     client gets 503." };
    Setting { field = "send_lowat"; flag = "--send-lowat"; directive = "send_lowat"; kind = Bytes;
              get = (fun c -> c.send_lowat); set = Some (fun c v -> { c with send_lowat = v });
              valid = (fun n -> n >= 0 && n <= 0x3fff_ffff); bound = "must be between 0 and 1073741823";
              doc = "Unsent bytes a connection may hold in the kernel (TCP_NOTSENT_LOWAT) before \
                     the worker waits for the client to take them: large files go out in slices \
                     as the client reads. 0 leaves the kernel's default." };
    Setting { field = "grace_period"; flag = "--grace"; directive = "grace"; kind = Seconds;
              get = (fun c -> c.grace_period); set = Some (fun c v -> { c with grace_period = v });
              valid = (fun x -> x >= 0.); bound = "must not be negative";
              doc = "On SIGTERM or SIGINT, how long responses in progress (a large download) may \
                     go on before the connections are closed." };
    Setting { field = "defer_accept"; flag = "--no-defer-accept"; directive = "defer_accept"; kind = Switch;
              get = (fun c -> c.defer_accept); set = Some (fun c v -> { c with defer_accept = v });
              valid = any; bound = "";
              doc = "Accept connections as soon as they are established, not when their first \
                     bytes arrive (TCP_DEFER_ACCEPT, on by default)." };
    Setting { field = "http2"; flag = "--no-http2"; directive = "http2"; kind = Switch;
              get = (fun c -> c.http2); set = Some (fun c v -> { c with http2 = v }); valid = any; bound = "";
              doc = "Speak HTTP/1.1 only: TLS offers no $(b,h2) by ALPN and a plain connection opening \
                     with the HTTP/2 preface is not served as h2c. By default both speak HTTP/2." };
    (* Read by parsers of their own (they fill the [tls] record): named
       and bounded here. *)
    Setting { field = "tls: hsts"; flag = "--hsts"; directive = "hsts"; kind = Count;
              get = tls_int (fun t -> Option.value t.hsts ~default:0); set = None; valid = not_negative_int;
              bound = "must not be negative"; doc = "" };
    Setting { field = "tls: ticket_period"; flag = "--tls-ticket-rotation"; directive = "tls_ticket_rotation";
              kind = Count; get = (fun c -> match c.tls with Some t -> t.ticket_period | None -> 1); set = None;
              valid = (fun n -> n >= 1); bound = "must be at least 1"; doc = "" };
  ]

let field_name (Setting s) = s.field

let find field = List.find_opt (fun (Setting s) -> s.field = field) settings

(* The first address given twice (port 0, a free port each time, aside),
   with the roles of both. *)
let rec listed_twice = function
  | [] -> None
  | (h, p, r1) :: rest -> (
      match List.find_opt (fun (h', p', _) -> p <> 0 && h' = h && p' = p) rest with
      | Some (_, _, r2) -> Some (h, p, r1, r2)
      | None -> listed_twice rest)

let check ?(name = field_name) ?(role_name = role_name) c =
  let bad fmt = Printf.ksprintf (fun s -> Error s) fmt in
  match List.find_opt (fun (Setting s) -> not (s.valid (s.get c))) settings with
  | Some (Setting s as setting) -> bad "%s %s" (name setting) s.bound
  | None ->
  if List.exists (fun (_, p, _) -> p < 0 || p > 65535) (endpoints c) then
    bad "a port is outside 0-65535"
  else
  match listed_twice (endpoints c) with
  | Some (h, p, r1, r2) when r1 = r2 -> bad "%s lists %s twice" (role_name r1) (url h p)
  | Some (h, p, r1, r2) ->
      bad "%s is in both %s and %s: one socket has one role" (url h p) (role_name r1) (role_name r2)
  | None ->
  if (match c.tls with Some t -> t.cert_file = "" || t.key_file = "" | None -> false) then
    bad "tls: give both a certificate and a key file"
  else if (match c.stats with Some t -> t = "" || not (String.for_all Httpz.Charset.is_tchar t) | None -> false)
  then bad "the stats token must be a non-empty token (letters, digits and !#$%%&'*+-.^_`|~)"
  else if c.server_name <> "" && not (Httpz.Response.is_field_value c.server_name) then
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

(* {1 Limits} *)

let with_limits c ~nofile =
  let workers = if c.workers <= 0 then cpu_count () else c.workers in
  let max_connections =
    if c.max_connections > 0 then c.max_connections
    else
      let nofile = if nofile > 0 then nofile else 1024 in
      max 1 (min max_default_connections (nofile - min fd_reserve (nofile / 2)))
  in
  { c with workers; max_connections }
