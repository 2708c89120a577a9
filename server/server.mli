(** The httpz HTTP/1.1 server: configuration and entry point.

    {[
      let handler c =
        Httpz_server.Ctx.start c Httpz.Status.Ok;
        Httpz_server.Ctx.header c Httpz.Header_name.Content_type "text/plain";
        Httpz_server.Ctx.body_string c "hello\n"

      let () = exit (Httpz_server.Server.run Httpz_server.Server.default_config handler)
    ]}

    {2 Processes}
    {!run} opens one listening socket, without [SO_REUSEPORT]: a second
    server started on the same address fails with "address already in
    use" instead of silently taking half of the traffic. With
    [workers = 1] and no {!config.user} the event loop then runs in the
    calling process itself: no fork, so a test or an embedding program sees
    one process. Otherwise ([workers = n > 1], or any [workers] with
    [user]) the calling process becomes a {e supervisor} that forks [n]
    workers; they share the socket (each waits on it with
    [EPOLLEXCLUSIVE], so one is woken per connection, and a worker at its
    connection limit simply stops accepting while the others go on), and
    each runs one event loop. The supervisor serves no requests: it
    restarts a worker that dies (logging why, with the signal's name, and
    waiting longer and longer — from 0.2 s up to 10 s — when workers keep
    dying within a second of their start; a restarted worker inherits the
    same socket and its queue of waiting connections), it forwards
    [SIGTERM]/[SIGINT] to the workers, and it reloads on [SIGHUP] (below).
    Workers ask the kernel for [SIGTERM] when the supervisor dies
    ([PR_SET_PDEATHSIG]), so they never outlive it.

    {2 Privileges}
    With {!config.user} the supervisor keeps the ids it was started with
    (root) and serves nothing; each worker, right after fork and before
    it accepts a client, takes the user's groups ([initgroups]), [setgid]
    and [setuid], then checks that every real and effective id is the
    user's and that [setuid 0] fails; if not, it exits with one line (and
    is restarted like a worker that dies). Workers never run as root. The
    supervisor needs root for reloads: it reopens the access log and reads
    the key as at start.

    {2 Reload ([SIGHUP])}
    With a supervisor: it reopens the access log at its path (after
    logrotate renamed it) and reads the certificate and key again, both as
    at start. If either fails it logs one line and changes nothing (the
    workers go on with the old ones). Otherwise it forks a new generation
    of workers on the same listening sockets (nothing is closed, so no
    client is refused; clients queue in the kernel meanwhile), and once
    they all serve, it sends the previous generation [SIGQUIT]: those stop
    accepting, close their idle keep-alive connections, and finish the
    requests in flight (a connection whose first request is on its way,
    a TLS handshake say, gets its answer) however long they take: a
    download is not cut by logrotate's reload, and each connection is still
    bounded by the write and idle timeouts. A [SIGTERM] to the supervisor
    then gives them [grace_period] like the others. Only the
    current generation is restarted when a worker dies; a worker of a
    previous one, or of a new generation that failed to start (then the
    previous one keeps serving), is only waited for. Session-ticket keys
    derive from a secret drawn once, before the first fork, so tickets
    resume across generations. Caches a handler keeps (the static file
    cache) start empty in the new generation. With neither an access log
    file nor TLS, there is nothing to reload and [SIGHUP] is logged and
    ignored.

    Without a supervisor (one worker, no [user]) the process reloads in
    place: it reopens the access log and reads certificate and key again
    for new connections, with its own privileges, and keeps serving on the
    same connections.

    {2 Signals and shutdown}
    [SIGPIPE] is ignored. [SIGHUP] reloads (above) and serving goes on.
    [SIGTERM] and [SIGINT] start a
    graceful shutdown: the listening socket is closed (new clients are
    refused), idle keep-alive connections are closed, in-flight requests
    finish (their responses carry [Connection: close]) for at most
    [grace_period], then what is left is closed and the process exits 0.
    The supervisor exits when all workers have exited. The server receives
    these signals through a [signalfd] registered in epoll, so they are
    handled between events and never interrupt a handler. While {!run}
    runs they are blocked in the calling thread (and in the processes the
    handler may fork, unless it unblocks them); {!run} restores the signal
    mask before it returns.

    {2 Logs}
    On stderr, one line each: the start line (address, workers, the
    document root when {!config.root} is given, and whether the kernel
    provides openat2), worker restarts, errors that close the listening
    socket, and at exit one line per worker:
    [httpz: worker PID served N requests, minor words/request X].

    {2 Statistics}
    Each worker counts the requests it has answered and the words its loop
    allocated on the minor heap ([Gc.minor_words]). The figure printed at
    exit and served at [/__httpz/stats] is measured in steady state: from the
    1000th request on (over all requests when there were fewer). The
    one-time allocation of a connection slot's buffers on its first use is
    memory growing to the peak number of concurrent connections, not work
    per request: it is counted apart, as [setup_words] over
    [slots_created] slots. With [stats = Some token], [GET /__httpz/stats]
    carrying [Authorization: Bearer token] answers
    [{"requests": N, "minor_words": W, "minor_collections": N,
      "major_collections": N, "heap_words": N, "connections": N,
      "slots_created": N, "setup_words": W, "buffer_bytes": N,
      "spare_buffer_bytes": N, "evicted": N, "refused": N, "io": "uring",
      "pid": P}]
    where [requests] and [minor_words] are totals since the worker started
    ([minor_words] excludes slot set-up and what building this very answer
    allocates, and the stats requests are not counted), so two samples give
    words per request.
    The request never reaches the handler. *)

type tls = {
  cert_file : string;
      (** PEM certificate chain, leaf first (Let's Encrypt's
          [fullchain.pem]). *)
  key_file : string;  (** its PEM private key, RSA or ECDSA, not encrypted *)
  hsts : int option;
      (** [Some n]: [Strict-Transport-Security: max-age=n] on every https
          response. Default [None]. *)
  redirect_http : (string * int) list;
      (** Plain-HTTP addresses, as [(host, port)], that answer every request
          with [301] to the same host and target over https (on the port of
          the first address of {!config.listen}, left out when 443).
          Default [[]]. *)
  ticket_period : int;
      (** Seconds between session-ticket key rotations. A ticket stays
          valid for one to two periods. Default [3600]. *)
}
(** HTTPS: every address of {!config.listen} speaks TLS.

    TLS 1.2 and 1.3 only, Mozilla's "intermediate" cipher suites (ECDHE
    with AES-GCM or ChaCha20-Poly1305; DHE for old RSA clients), groups
    X25519, P-256 and P-384; no renegotiation, no compression. ALPN
    selects [http/1.1]; a client that offers only other protocols ([h2]
    alone) is refused with the [no_application_protocol] alert. SNI is
    accepted (one certificate serves every name).

    Sessions resume with stateless tickets (TLS 1.2 and 1.3) whose keys are
    derived from a secret drawn once, before the workers fork: a client
    resumes on whichever worker it reaches. There is no session cache.

    The certificate and key are read by the process that keeps its
    privileges (the supervisor; {!config.user} applies to workers only), so
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
    connections. *)

val tls : cert_file:string -> key_file:string -> tls
(** [tls ~cert_file ~key_file] has the defaults documented on each
    field. *)

type io = Loop_state.io =
  | Epoll  (** readiness: epoll, one system call per read and per write *)
  | Uring
      (** completions: io_uring, the reads and writes of a whole loop turn
          in one system call; TLS connections on readiness through it. Where
          the kernel refuses io_uring, epoll, with one line in the log. *)

type config = {
  io : io;  (** How a worker waits for and moves bytes. Default [Uring]. *)
  host : string;
      (** Address to listen on: numeric IPv4 or IPv6, or a host name
          (resolved at start-up to its first address). Default
          ["127.0.0.1"]. *)
  port : int;
      (** TCP port. Default [8080]. [0] picks a free port ({!config.on_listen}
          tells which). *)
  listen : (string * int) list;
      (** Every address to listen on, as [(host, port)] with [host] as in
          {!config.host}; each serves the handler, and every worker accepts
          on all of them. Default [[]]: [host]:[port] alone. When given,
          [host] and [port] are not used. An IPv6 address gets a socket of
          its own that serves IPv6 only ([IPV6_V6ONLY]), so
          [[("0.0.0.0", 80); ("::", 80)]] serves both families. *)
  listen_fds : int list;
      (** Listening TCP sockets already open, handed over by whoever
          started the process (systemd's socket activation:
          {!systemd_listen_fds}): served instead of binding [listen] (or
          [host]:[port]), which are then not used; their addresses are
          read from the sockets. Each is checked to be a listening stream
          socket, made non-blocking and close-on-exec, and given the same
          options as a socket of our own ([TCP_NODELAY], [send_lowat],
          [defer_accept]). With {!config.tls} they serve HTTPS. Default
          [[]]. *)
  workers : int;
      (** Worker processes. Default: the number of CPUs this process may run
          on (sched_getaffinity, as [nproc] counts, so [taskset] is honoured).
          [0] or less also means that number. *)
  max_connections : int;
      (** Open connections per worker. Default [0]: from the descriptor
          limit, which {!run} raises to its hard limit ([RLIMIT_NOFILE]),
          less {!fd_reserve} for files, logs and the loop's own, and at most
          {!max_default_connections}. At the limit a worker leaves new
          clients to other workers for 100 ms (it stops accepting), then
          closes its connection idle longest (between requests, or not yet
          sent anything) for each one still waiting, as nginx does; with no
          connection idle it stops accepting until one closes. *)
  backlog : int;  (** [listen(2)] backlog. Default [4096]. *)
  read_buffer : int;
      (** Bytes of a connection's read buffer, which is also the largest
          request head accepted ({!Httpz.Request.limits} [max_head]). Default
          32 KiB. *)
  write_buffer : int;
      (** Bytes of a connection's response buffer: head plus a small body go
          out from it in one write. Default 16 KiB. It grows (allocating) only
          for a chunked body produced faster than the client reads, or to
          keep the rest of a {!Ctx.body_bigstring} body the client did not
          take at once; it shrinks back after a response that grew it past
          1 MiB. *)
  max_body : int;
      (** Largest request body accepted, Content-Length or chunked; above it
          the answer is 413 and the connection is closed. Default 1 MiB.
          A body is read only when the handler asks for it
          ({!Ctx.await_body}), into a buffer of the worker's pool that is
          given back when the request ends: [max_connections * max_body]
          bounds what bodies in flight may hold, and nothing stays held
          after them. *)
  (* Timeouts are checked on a 100 ms tick: one fires between its value and
     200 ms later. *)
  header_timeout : float;
      (** Seconds allowed to receive a whole request head once its first byte
          has arrived (against slowloris). Default [10.]. *)
  idle_timeout : float;
      (** Seconds a keep-alive connection may wait for its next request.
          Default [60.]. (The wait for a new connection's first request is
          [header_timeout].) *)
  body_timeout : float;
      (** Seconds allowed for a request body once the handler asked for it.
          The deadline moves later only as data arrives at 1 KiB/s or more
          on average (each byte earns 1/1024 s), and never further than
          [body_timeout] ahead of now: a body trickling in a byte at a time
          is cut (408) after [body_timeout], a large upload at any useful
          speed is not. Default [30.]. *)
  write_timeout : float;
      (** Seconds a response may make no progress because the client does
          not read. Default [30.]. *)
  handler_timeout : float;
      (** Seconds a handler may wait at once after returning without an
          answer ([Ctx.suspend], [Ctx.sleep], [Ctx.offload], …) before
          the client gets 503 and the continuation is dropped. Each wait
          has its own: a stream that sleeps between pieces is not cut.
          Default [30.]. *)
  offload_threads : int;
      (** Threads of each worker's pool for {!Ctx.offload}, started on its
          first use. At least 1. Default [4]. *)
  offload_queue : int;
      (** Offloaded jobs that may wait for a thread of a worker's pool;
          past it {!Ctx.offload} answers [503] with [Retry-After: 1] at
          once. The job of a request that ends before a thread takes it
          (the client left) never runs and stops counting at once. Default
          [0]: [64 * offload_threads] (256 jobs: a second of 16 ms jobs). *)
  grace_period : float;
      (** Seconds in-flight requests get to finish after SIGTERM/SIGINT.
          Default [10.]. *)
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
          Responses no larger than the limit are unaffected. *)
  defer_accept : bool;
      (** Set [TCP_DEFER_ACCEPT] (1 s) on the listening socket: the kernel
          hands over a connection once its first bytes have arrived, so the
          worker reads the request at once instead of registering the
          connection and waiting for it. A client that connects and sends
          nothing is handed over after about a second (then
          [header_timeout] applies), and costs no worker slot until then.
          Default [true]. *)
  stats : string option;
      (** [Some token]: answer [GET /__httpz/stats] to requests that carry
          [Authorization: Bearer token] (on any listener); a request without
          it goes to the handler like any other. The token is the only
          allow: the peer's address is not trusted, since every client of a
          reverse proxy on the same host comes from the loopback. Default
          [None]. @raise Invalid_argument from {!run} when the token is empty
          or not a valid field value. *)
  tls : tls option;  (** Serve HTTPS ({!tls}). Default [None]. *)
  access_log : string option;
      (** File to append the access log to, in [log_format] ([Some "-"]:
          standard output), or [None] (default). Opened before privileges
          are dropped; reopened at the same path on [SIGHUP] (by the
          supervisor, with its privileges, so the directory may be root's
          alone; or by the single in-process worker).
          Lines are buffered per worker and written whole, once a second
          and at exit, so lines of different workers never mix. *)
  log_format : Access_log.format;
      (** The access log's line format ({!Access_log.format}). Default
          [Common]. *)
  headers : (string * string) list;
      (** Header fields added to every response, after [Server]. Default
          [[("X-Content-Type-Options", "nosniff")]]: browsers do not guess
          a type other than the one sent. Names must be tokens and values
          field values (no CR, LF or NUL), and with the [Server] line and
          HSTS they may take at most half of {!config.write_buffer}, or
          {!run} refuses to start ({!check}). *)
  user : string option;
      (** Workers run as this user: each one takes the user's groups and
          ids right after fork (see Privileges above); the supervisor, which
          always runs when [user] is given, keeps the caller's. Only root
          may name another user. Default [None]: as the caller, with a
          warning on stderr when that is root. *)
  server_name : string;  (** The [Server] header value. Default ["httpz"]. *)
  root : string option;
      (** Shown in the start line only (the static file handler's document
          root). Default [None]. *)
  on_listen : int -> unit;
      (** Called once, in the calling process, with the bound port, once the
          server accepts connections (with several workers: once every
          worker listens), before the start line is logged. Default: does
          nothing. *)
}

val fd_reserve : int
(** [64]: descriptors a worker keeps out of the connection limit (files
    being sent, the access log, the event loop's own); half the limit when
    that is under 128. *)

val max_default_connections : int
(** [65_536]: the default limit's ceiling (each slot costs about 100 bytes
    of tables up front, whatever the connections). *)

val default_config : config
(** [default_config] holds the defaults documented on each field. *)

val parse_listen : string -> (string * int, string) result
(** [parse_listen s] reads a listening address as given on a command
    line: ["HOST:PORT"] (an IPv4 address or a host name),
    ["[IPv6]:PORT"] (brackets required, e.g. ["[::1]:8080"], ["[::]:80"])
    or [":PORT"] (every IPv4 interface, ["0.0.0.0"]). [Error] names what
    is wrong (port out of range, IPv6 without brackets, …). Host names
    are not resolved here ({!run} does it). *)

val systemd_listen_fds : unit -> (int list, string) result
(** [systemd_listen_fds ()] is the sockets systemd passed to this process
    (sd_listen_fds(3)): [[3; …; 3 + n - 1]] when [LISTEN_PID] is this
    process's pid and [LISTEN_FDS] is [n], [[]] when the variables are
    absent or name another process. The variables are then emptied, so a
    child process does not take the sockets again. [Error] for variables
    that do not parse. Use the result as {!config.listen_fds}. *)

val cpu_count : unit -> int
(** [cpu_count ()] is the number of CPUs this process may run on (at least
    [1]). *)

val check : config -> (unit, string) result
(** [check config]: [Error] with one line naming the first field out of
    range or malformed ({!config.headers}, {!config.server_name}, ports,
    buffer sizes, …), as {!run} would refuse it at start. Among them: the
    header lines every response carries whatever the handler adds (the
    [Server] line, {!config.headers}, and [Strict-Transport-Security]
    with {!tls.hsts}) may take at most half of {!config.write_buffer}
    (8 KiB of the default 16 KiB), leaving the other half to the status
    line, [Date] and the handler's own fields. Allocates. *)

val run : config -> (Ctx.t -> unit) -> int
(** [run config handler] serves HTTP/1.1 on [config.host]:[config.port],
    calling [handler] once per request (see {!Ctx}), until SIGTERM or SIGINT,
    and is the process exit code: [0] after a graceful shutdown, [1] when the
    server could not start (address in use, bad host, …; the reason is
    logged on stderr). In a forked worker it never returns: the worker
    exits. *)
