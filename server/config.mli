(** The server's configuration: the record {!Server.run} takes, its
    defaults, the listening addresses it names, and the start-up checks
    ({!check}). Pure: nothing here opens a socket or reads a file
    ({!Listeners} does, {!Server} composes both); everything allocates, none
    of it is on the request path. {!Server} re-exports the record and its
    values under their historical names ([Server.config],
    [Server.default_config], [Server.check], …). *)

type tls = {
  cert_file : string;
      (** PEM certificate chain, leaf first (Let's Encrypt's
          [fullchain.pem]). [--tls-cert FILE]; [tls_certificate FILE;]. *)
  key_file : string;
      (** its PEM private key, RSA or ECDSA, not encrypted. [--tls-key FILE];
          [tls_certificate_key FILE;]. *)
  hsts : int option;
      (** [Some n]: [Strict-Transport-Security: max-age=n] on every https
          response. Default [None]. [--hsts SECONDS]; [hsts DURATION;]. *)
  redirect_http : (string * int) list;
      (** Plain-HTTP addresses, as [(host, port)], that answer every request
          with [301] to the same host and target over https (on the port of
          the first address of {!t.listen}, left out when 443).
          Default [[]]. [--redirect-http PORT] (on every host of
          [--listen]); [listen ADDRESS redirect;]. *)
  listen_plain : (string * int) list;
      (** Plain-HTTP addresses, as [(host, port)], that serve the same
          handler as {!t.listen} without TLS, alongside it (a site on
          port 80 and 443 alike, or a plain port for a local health check).
          Their responses carry {!t.headers} but never
          [Strict-Transport-Security], which belongs to https responses
          only. Default [[]]. [--listen-plain ADDR:PORT] (repeated);
          [listen ADDRESS plain;] (or no role) beside a [listen … tls]. *)
  ticket_period : int;
      (** Seconds between session-ticket key rotations. A ticket stays
          valid for one to two periods. Default [3600]. At least 1.
          [--tls-ticket-rotation SECONDS]; [tls_ticket_rotation DURATION;]. *)
  sni : (string list * string * string) list;
      (** More certificates, chosen by the name the client asks for (TLS
          SNI): [(names, cert_file, key_file)], where a name is exact
          (["example.com"], ASCII case-insensitive) or a wildcard
          (["*.example.com"]: one or more labels before the suffix). An
          exact name wins over a wildcard, a longer wildcard over a shorter
          one; a client that sends no name, or one no entry has, gets
          [cert_file]/[key_file]. Read like them (by the supervisor, at
          start and on [SIGHUP]). Default [[]]. No option; a [site]
          block's [tls_certificate] and [tls_certificate_key]. *)
}
(** HTTPS: every address of {!t.listen} speaks TLS; the addresses of
    [listen_plain] serve the same handler in plain HTTP, those of
    [redirect_http] redirect to https. An address may have one role only
    ({!check}).

    TLS 1.2 and 1.3 only, Mozilla's "intermediate" cipher suites (ECDHE
    with AES-GCM or ChaCha20-Poly1305; DHE for old RSA clients), groups
    X25519, P-256 and P-384; no renegotiation, no compression. ALPN
    selects [h2] when {!t.http2} is on and the client offers it, else
    [http/1.1]; a client that offers only protocols the server does not
    speak is refused with the [no_application_protocol] alert. SNI picks
    among the certificates of {!tls.sni}; without them one certificate
    serves every name.

    Sessions resume with stateless tickets (TLS 1.2 and 1.3) whose keys are
    derived from a secret drawn once, before the workers fork: a client
    resumes on whichever worker it reaches. There is no session cache.

    The certificate and key are read by the process that keeps its
    privileges (the supervisor; {!t.user} applies to workers only), so
    the key may be readable by root alone, at start and on [SIGHUP], which
    reads them again for a new generation of workers (connections already
    open keep theirs until they end). A reload that fails is logged once
    and the old certificate stays.

    A client that speaks plain HTTP to the TLS port gets [400 Bad Request]
    with a short page saying "The plain HTTP request was sent to an HTTPS
    port", as from nginx, and the connection is closed.

    Idle connections keep no record buffers (released when empty) and no
    handshake state. Files are sent with [sendfile] by the kernel where it
    offers kernel TLS (checked at start and logged), else read and
    encrypted in user space. {!Ctx.upgrade} is refused on TLS
    connections; WebSocket ({!Ws.accept}) works on them, the connection
    staying with its transport. *)

val tls : cert_file:string -> key_file:string -> tls
(** [tls ~cert_file ~key_file] has the defaults documented on each
    field. *)

val managed_headers : string list
(** Header names (lower case) the server or the static handler writes
    itself ([content-length], [date], [etag], [location], …): an added
    field of one of these names would contradict or duplicate it, so the
    command line and the configuration file refuse them. *)

type io =
  | Epoll  (** readiness: epoll, one system call per read and per write *)
  | Uring
      (** completions: io_uring, the reads and writes of a whole loop turn
          in one system call; TLS connections on readiness through it. Where
          the kernel refuses io_uring, epoll, with one line in the log. *)

type t = {
  io : io;
      (** How a worker waits for and moves bytes. Default [Uring].
          [--io uring|epoll]; [io uring|epoll;]. *)
  host : string;
      (** Address to listen on: numeric IPv4 or IPv6, or a host name
          (resolved at start-up to its first address). Default
          ["127.0.0.1"]. [--host ADDR]; the first [listen] of the file. *)
  port : int;
      (** TCP port. Default [8080]. [0] picks a free port ({!t.on_listen}
          tells which). [-p]/[--port PORT]; the first [listen]. *)
  listen : (string * int) list;
      (** Every address to listen on, as [(host, port)] with [host] as in
          {!t.host}; each serves the handler, and every worker accepts
          on all of them. Default [[]]: [host]:[port] alone. When given,
          [host] and [port] are not used. An IPv6 address gets a socket of
          its own that serves IPv6 only ([IPV6_V6ONLY]), so
          [[("0.0.0.0", 80); ("::", 80)]] serves both families.
          [--listen ADDR:PORT] (repeated); [listen ADDRESS [tls];]. *)
  listen_fds : int list;
      (** Listening TCP sockets already open, handed over by whoever
          started the process (systemd's socket activation:
          {!Listeners.systemd_listen_fds}): served instead of binding [listen] (or
          [host]:[port]), which are then not used; their addresses are
          read from the sockets. Each is checked to be a listening stream
          socket, made non-blocking and close-on-exec, and given the same
          options as a socket of our own ([TCP_NODELAY], [send_lowat],
          [defer_accept]). With {!t.tls}, a socket's role follows its
          port: on the port of a {!tls.listen_plain} address it serves
          plain HTTP, on the port of a {!tls.redirect_http} address it
          redirects, otherwise it serves HTTPS (a port in both lists is
          refused as ambiguous, and so is a hand-over with no socket left
          for HTTPS). Plain and redirect addresses whose port no socket
          has are bound here as usual. Default [[]]. Set by systemd's
          [LISTEN_FDS] and [LISTEN_PID], with the options or the file. *)
  workers : int;
      (** Worker processes. Default: the number of CPUs this process may run
          on (sched_getaffinity, as [nproc] counts, so [taskset] is honoured).
          [0] or less also means that number. [--workers N] (at least 1);
          [workers N|auto;] (1 to 1024). *)
  max_connections : int;
      (** Open connections per worker. Default [0]: from the descriptor
          limit, which {!Server.run} raises to its hard limit ([RLIMIT_NOFILE]),
          less {!fd_reserve} for files, logs and the loop's own, and at most
          {!max_default_connections}. At the limit a worker leaves new
          clients to other workers for 100 ms (it stops accepting), then
          closes its connection idle longest (between requests, or not yet
          sent anything) for each one still waiting, as nginx does; with no
          connection idle it stops accepting until one closes. Not
          negative. [--max-connections N]; [max_connections N;]. *)
  backlog : int;
      (** [listen(2)] backlog: connections the kernel queues before a
          worker accepts them (the kernel caps it at
          [net.core.somaxconn]). Default [4096]. At least 1.
          [--backlog N]; [backlog N;]. *)
  read_buffer : int;
      (** Bytes of a connection's read buffer, which is also the largest
          request head accepted ({!Httpz.Request.limits} [max_head]). Default
          32 KiB. At least 1024. Library only (no option, no directive). *)
  write_buffer : int;
      (** Bytes of a connection's response buffer: head plus a small body go
          out from it in one write. Default 16 KiB. It grows (allocating) only
          for a chunked body produced faster than the client reads, or to
          keep the rest of a {!Ctx.body_bigstring} body the client did not
          take at once; it shrinks back after a response that grew it past
          1 MiB. At least 1024; with {!t.headers}, see {!check}. Library
          only. *)
  max_body : int;
      (** Largest request body read whole ({!Ctx.await_body}), Content-Length
          or chunked; above it the answer is 413 and the connection is
          closed. Default 1 MiB. Such a body is read only when the handler
          asks for it, into a buffer of the worker's pool that is given back
          when the request ends: [max_connections * max_body] bounds what
          bodies in flight may hold, and nothing stays held after them. A
          body the handler streams ({!Ctx.read_body}) is held one read
          buffer at a time whatever its size, so its bound is the [~limit]
          the handler gives, not this one: an upload route sets its own.
          Not negative. [--max-body BYTES]; [max_body SIZE;] ([64k], [1m]). *)
  (* Timeouts are checked on a 100 ms tick: one fires between its value and
     200 ms later. *)
  header_timeout : float;
      (** Seconds allowed to receive a whole request head once its first byte
          has arrived (against slowloris). Default [10.]. Positive.
          [--header-timeout SECONDS]; [header_timeout DURATION;]. *)
  idle_timeout : float;
      (** Seconds a keep-alive connection may wait for its next request.
          Default [60.]. (The wait for a new connection's first request is
          [header_timeout].) Positive. [--idle-timeout SECONDS];
          [idle_timeout DURATION;]. *)
  body_timeout : float;
      (** Seconds allowed for a request body once the handler asked for it.
          The deadline moves later only as data arrives at 1 KiB/s or more
          on average (each byte earns 1/1024 s), and never further than
          [body_timeout] ahead of now: a body trickling in a byte at a time
          is cut (408) after [body_timeout], a large upload at any useful
          speed is not. Default [30.]. Positive. [--body-timeout SECONDS];
          [body_timeout DURATION;]. *)
  write_timeout : float;
      (** Seconds a response may make no progress because the client does
          not read. Default [30.]. Positive. [--write-timeout SECONDS];
          [write_timeout DURATION;]. *)
  handler_timeout : float;
      (** Seconds a handler may wait at once after returning without an
          answer ([Ctx.suspend], [Ctx.sleep], [Ctx.offload], …) before
          the client gets 503 and the continuation is dropped. Each wait
          has its own: a stream that sleeps between pieces is not cut.
          Default [30.]. Positive. [--handler-timeout SECONDS];
          [handler_timeout DURATION;]. *)
  offload_threads : int;
      (** Threads of each worker's pool for {!Ctx.offload}, started on its
          first use. At least 1. Default [4]. Library only. *)
  offload_queue : int;
      (** Offloaded jobs that may wait for a thread of a worker's pool;
          past it {!Ctx.offload} answers [503] with [Retry-After: 1] at
          once. The job of a request that ends before a thread takes it
          (the client left) never runs and stops counting at once. Default
          [0]: [64 * offload_threads] (256 jobs: a second of 16 ms jobs).
          Not negative. Library only. *)
  grace_period : float;
      (** Seconds in-flight requests get to finish after SIGTERM/SIGINT.
          Default [10.]. Not negative. [--grace SECONDS]; [grace DURATION;]. *)
  send_lowat : int;
      (** Bytes of written-but-unsent data a connection may hold in the
          kernel ([TCP_NOTSENT_LOWAT]) before the worker stops writing to it
          and waits for the socket to become writable again. Default 16 KiB;
          [0] leaves the kernel's default (no limit below the send buffer).
          With a limit, a large file goes out in slices sent from the
          worker's own [sendfile] calls as the client takes them, instead of
          megabytes queued in the kernel and pushed out by the client's
          acknowledgements; over loopback that moved enough work off the
          client to raise 1 MiB throughput by about 10% (bench/README.md).
          Responses no larger than the limit are unaffected. At most
          [0x3fff_ffff]. [--send-lowat BYTES]; [send_lowat SIZE;]. *)
  defer_accept : bool;
      (** Set [TCP_DEFER_ACCEPT] (1 s) on the listening socket: the kernel
          hands over a connection once its first bytes have arrived, so the
          worker reads the request at once instead of registering the
          connection and waiting for it. A client that connects and sends
          nothing is handed over after about a second (then
          [header_timeout] applies), and costs no worker slot until then.
          Default [true]. [--no-defer-accept]; [defer_accept on|off;]. *)
  stats : string option;
      (** [Some token]: answer [GET /__httpz/stats] to requests that carry
          [Authorization: Bearer token] (on any listener); a request without
          it goes to the handler like any other. The token is the only
          allow: the peer's address is not trusted, since every client of a
          reverse proxy on the same host comes from the loopback. Default
          [None]. @raise Invalid_argument from {!Server.run} when the token is empty
          or not a valid field value. [--stats-token TOKEN] (or
          [HTTPZ_STATS_TOKEN]); [stats_token TOKEN;]. *)
  stats_listen : (string * int) list;
      (** Addresses, as [(host, port)], of listeners that serve the
          status alone ({!Stats.status_handler}): [GET /__httpz/stats]
          (JSON: the answering worker's counters and the totals of all)
          and [/__httpz/stats.txt] (the totals as [name value] lines),
          without a token; [404] for anything else. Plain HTTP, whatever
          {!t.tls}. Bind it to the loopback or an internal address.
          Default [[]]. [--stats-listen ADDR:PORT] (repeated);
          [stats_listen ADDRESS;] (repeated, a bare port on 127.0.0.1). *)
  conn_limit : int;
      (** Open connections the server accepts from one client address (an
          IPv6 client: one /64), as nginx's [limit_conn]; one more is
          closed as soon as it is accepted, before a byte is read
          ({!Conn_limit}), counted across the workers (in memory they
          share). Default [0]: no limit. Not negative. [--limit-conn N];
          [limit_conn N;] or [limit_conn ZONE N;] (at least 1). *)
  keepalive_requests : int;
      (** Requests one connection may carry, as nginx's
          [keepalive_requests]: over HTTP/1.1 the answer to the last one
          says [Connection: close] and the connection closes after it; over
          HTTP/2, once that many streams have ended the server sends
          GOAWAY (streams already open finish, later ones are left to a new
          connection, as RFC 9113 §6.8 says) and closes when they are done.
          Default [0]: no limit (nginx caps at 1000 to free what a
          connection accumulates; a connection here holds nothing more
          after its thousandth request than after its first). Not
          negative. [--keepalive-requests N]; [keepalive_requests N;]. *)
  tls : tls option;
      (** Serve HTTPS ({!tls}). Default [None]. [--tls-cert] and
          [--tls-key]; a [listen … tls] with a certificate. *)
  access_log : string option;
      (** File to append the access log to, in [log_format] ([Some "-"]:
          standard output), or [None] (default). Opened before privileges
          are dropped; reopened at the same path on [SIGHUP] (by the
          supervisor, with its privileges, so the directory may be root's
          alone; or by the single in-process worker).
          Lines are buffered per worker and written whole, once a second
          and at exit, so lines of different workers never mix.
          [--access-log FILE]; [access_log FILE|off [FORMAT];]. *)
  log_format : Access_log.format;
      (** The access log's line format ({!Access_log.format}). Default
          [Common]. [--log-format NAME]; [log_format NAME;]. *)
  error_log : string option;
      (** File the server's own messages go to ({!Log}): opened for
          appending at start, by the process that keeps its privileges,
          and made its standard error, which the workers inherit; reopened
          on [SIGHUP] (the supervisor reopens it before it starts the new
          workers). Default [None]: standard error. [--error-log FILE];
          [error_log FILE|stderr;]. *)
  log_level : Log.level;
      (** The least severe messages written ({!Log}). Default [Info].
          [--log-level LEVEL]; [log_level LEVEL;]. *)
  headers : (string * string) list;
      (** Header fields added to every response, after [Server]. Default
          [[("X-Content-Type-Options", "nosniff")]]: browsers do not guess
          a type other than the one sent. Names must be tokens and values
          field values (no CR, LF or NUL), and with the [Server] line and
          HSTS they may take at most half of {!t.write_buffer}, or
          {!Server.run} refuses to start ({!check}). [--header 'NAME:
          VALUE'] (repeated); [header NAME VALUE;] at the top level. *)
  user : string option;
      (** Workers run as this user: each one takes the user's groups and
          ids right after fork (see Privileges above); the supervisor, which
          always runs when [user] is given, keeps the caller's. Only root
          may name another user. Default [None]: as the caller, with a
          warning on stderr when that is root. [--user NAME]; [user NAME;]. *)
  server_name : string;
      (** The [Server] header value; [""]: no [Server] field at all.
          Default ["httpz"]. No option; [server_header NAME|off;]. *)
  root : string option;
      (** Shown in the start line only (the static file handler's document
          root). Default [None]. [httpz serve DIR]; the default site's
          [root]. *)
  on_listen : int -> unit;
      (** Called once, in the calling process, with the bound port, once the
          server accepts connections (with several workers: once every
          worker listens), before the start line is logged. Default: does
          nothing. Library only. *)
  dev_errors : bool;
      (** Development mode. When a handler raises before any byte of its
          response left, a client on the loopback gets a 500 page showing
          the exception and its backtrace (HTML-escaped), whatever
          {!errors} says; others get the usual short 500 (or {!errors}').
          Workers also record backtraces
          ([Printexc.record_backtrace true]), so the log line of a
          handler's exception carries one (without this, only with
          [OCAMLRUNPARAM=b]). Default [false]: never turn it on for a
          server the public reaches through a proxy on the same host,
          whose requests all come from the loopback. Library only. *)
  errors : Errors.t option;
      (** The renderer of every error answer the server and the
          application layer write once a request head is parsed (router
          404/405/400, [Respond.error], 413/408 of bodies, 500 of a failed
          handler, 503, guard refusals, static errors): {!Errors}, where
          the list and its exceptions are. Default [None]: each answer as
          it always was ([text/plain], the static handler's HTML). Library
          only. *)
  http2 : bool;
      (** HTTP/2: TLS connections that select "h2" by ALPN (offered before
          http/1.1) and plain connections that open with the HTTP/2 client
          preface (h2c with prior knowledge, on the same port as HTTP/1.1)
          speak HTTP/2. Needs [read_buffer >= 17 KiB] (one frame), else it
          stays off. Default [true]. [--no-http2]; [http2 on|off;]. *)
}
(** The server's settings: the one record every way of configuring it
    fills. Each field's documentation says its default, its unit and
    bounds ({!check}), the option of [httpz serve] that sets it and the
    directive of its configuration file ({!Httpz_conf.Conf_file});
    "library only" fields have neither. The scalar ones are also listed in
    {!settings}, from which the command line's options and the file's
    directives are made: a setting added there is read by both. *)

val fd_reserve : int
(** [64]: descriptors a worker keeps out of the connection limit (files
    being sent, the access log, the event loop's own); half the limit when
    that is under 128. *)

val max_default_connections : int
(** [65_536]: the default limit's ceiling (each slot costs about 100 bytes
    of tables up front, whatever the connections). *)

val default_config : t
(** [default_config] holds the defaults documented on each field. *)

val parse_listen : string -> (string * int, string) result
(** [parse_listen s] reads a listening address as given on a command
    line: ["HOST:PORT"] (an IPv4 address or a host name),
    ["[IPv6]:PORT"] (brackets required, e.g. ["[::1]:8080"], ["[::]:80"])
    or [":PORT"] (every IPv4 interface, ["0.0.0.0"]). [Error] names what
    is wrong (port out of range, IPv6 without brackets, …). Host names
    are not resolved here ({!Server.run} does it). *)

val cpu_count : unit -> int
(** [cpu_count ()] is the number of CPUs this process may run on (at least
    [1]). *)

(** {1 Settings} *)

(** How a scalar setting is written, on the command line and in the file. *)
type 'a kind =
  | Count : int kind  (** a whole number: [--x 5], [x 5;] *)
  | Bytes : int kind
      (** bytes: [--x 65536], [x 64k;] ([k], [m], [g]: powers of 1024) *)
  | Seconds : float kind
      (** seconds: [--x 2.5], [x 2500ms;] ([ms], [s], [m], [h], [d]; at most a
          day in the file) *)
  | Switch : bool kind
      (** on or off: the option turns the default over ([--no-http2]), the
          directive says which ([http2 off;]) *)

type 'a spec = {
  field : string;  (** the field of {!t}, as {!check}'s messages name it *)
  flag : string;  (** the option of [httpz serve] (["--write-timeout"]); [""]: none *)
  directive : string;  (** the configuration file's (["write_timeout"]); [""]: none *)
  kind : 'a kind;
  get : t -> 'a;
  set : (t -> 'a -> t) option;
      (** [None]: the option and the directive read more than a value (they
          fill {!tls}) and have parsers of their own; named and bounded
          here only *)
  valid : 'a -> bool;  (** the bound {!check} enforces *)
  bound : string;  (** what [valid] asks, for the message: ["must be positive"] *)
  doc : string;  (** the option's help *)
}
(** One scalar field of {!t}: how each way of configuring names, reads
    and bounds it. *)

type setting = Setting : 'a spec -> setting

val settings : setting list
(** Every scalar field {!check} bounds, and every one an option or a
    directive sets by its value alone: [httpz serve] makes an option of
    each with a [flag] and a [set], the configuration file a top-level
    directive of each with a [directive] and a [set] (a parser of its own
    may take a directive first: [limit_conn] is at least 1 in the file).
    {!check} tries them in this order. Adding a scalar setting: its field
    in {!t} (documented as the others), its default in {!default_config},
    its entry here; the option, the directive and the bound follow. *)

val field_name : setting -> string
(** [field_name s] is [s]'s {!spec.field} (["max_connections"], or
    ["tls: hsts"], ["tls: ticket_period"]). *)

val find : string -> setting option
(** [find field]: the setting of that {!spec.field}. *)

(** What a listening socket is for: serving the handler (over TLS when the
    server has it), serving it in plain HTTP beside TLS
    ({!tls.listen_plain}), or redirecting plain HTTP to https
    ({!tls.redirect_http}), or serving the status alone
    ({!t.stats_listen}). *)
type role = Serve | Serve_plain | Redirect | Status

val roles : role list
(** [[Serve; Serve_plain; Redirect; Status]]: the order of {!endpoints}. *)

val role_name : role -> string
(** [role_name r] is the field that lists [r]'s addresses: ["listen"],
    ["tls.listen_plain"], ["tls.redirect_http"], ["stats_listen"]. For
    messages. *)

val check :
  ?name:(setting -> string) -> ?role_name:(role -> string) -> t -> (unit, string) result
(** [check config]: [Error] with one line naming the first field out of
    range or malformed ({!t.headers}, {!t.server_name}, ports,
    buffer sizes, …), as {!Server.run} would refuse it at start. Among them: the
    header lines every response carries whatever the handler adds (the
    [Server] line, {!t.headers}, and [Strict-Transport-Security]
    with {!tls.hsts}) may take at most half of {!t.write_buffer}
    (8 KiB of the default 16 KiB), leaving the other half to the status
    line, [Date] and the handler's own fields. The timeouts must be
    positive, [grace_period] and [tls.hsts] not negative, no address
    (but of port [0]) listed twice, in one role or in two,
    [tls.ticket_period] at least 1 (the bounds of {!settings}, in their
    order). [name] (default {!field_name}) names a
    numeric field in the message, [role_name] (default {!role_name}) the
    list an address is in. Allocates. *)

(** {1 Addresses} *)

val addresses : t -> (string * int) list
(** [addresses c] is where [c] serves the handler: {!t.listen}, or
    [[(host, port)]] when it is empty. *)

val endpoints : t -> (string * int * role) list
(** [endpoints c] is every socket the server listens on, in the order
    {!Listeners.open_all} opens them: the {!addresses} ([Serve]), then
    the plain ones ([Serve_plain]), then the redirect addresses
    ([Redirect]). *)

val role_addresses : t -> role -> (string * int) list
(** [role_addresses c role] is the addresses of [c] that have [role]
    ([Serve]: {!addresses}). *)

val with_role_addresses : t -> role -> (string * int) list -> t
(** [with_role_addresses c role l] is [c] whose addresses of [role] are
    [l] (for [Serve]: {!t.listen}, and [host] and [port] from the first of
    [l]); [c] for another role when it has no {!t.tls}. *)

val inherited_role : t -> port:int -> (role, string) result
(** [inherited_role c ~port] is the role of a socket handed over
    ({!t.listen_fds}) bound to [port]: [Status] when {!t.stats_listen}
    has an address on [port], [Serve_plain] or [Redirect] when that list
    of [c.tls] has one, else [Serve]; [Error] when both TLS lists have
    one. *)

val url : ?scheme:string -> string -> int -> string
(** [url ~scheme host port] is ["http://host:port"], the host in brackets
    when it is IPv6. For log lines. *)

val hsts_line : t -> string
(** [hsts_line c] is the [Strict-Transport-Security] header line (CRLF
    included) an https listener adds to every response, or [""]. *)

(** {1 Limits} *)

val with_limits : t -> nofile:int -> t
(** [with_limits c ~nofile]: [c] with [workers] and [max_connections] at
    their effective values ([0] or less: {!cpu_count}; [0]: from the
    descriptor limit [nofile], [1024] when unknown ([nofile <= 0])). *)
