(** The httpz HTTP/1.1 server's entry point, {!run}. The configuration
    lives in {!Config} (record, defaults, checks), the listening sockets in
    {!Listeners}, the processes in {!Supervisor}; the types and values
    below re-export {!Config}'s under the names programs use.

    {[
      let handler c =
        Httpz_server.Ctx.start c Httpz.Status.Ok;
        Httpz_server.Ctx.header c Httpz.Header_name.Content_type "text/plain";
        Httpz_server.Ctx.body_string c "hello\n"

      let () = exit (Httpz_server.Server.run Httpz_server.Server.default_config handler)
    ]}

    {2 Listeners}
    One server listens on every address of {!config.listen} (or
    [host]:[port]) and serves the handler there, over TLS with
    {!config.tls}; with TLS it may also serve the same handler in plain
    HTTP on {!tls.listen_plain} (HSTS never goes on those responses) and
    redirect to https from {!tls.redirect_http}, all in one process and
    by every worker:
    {[
      let tls = { (Server.tls ~cert_file ~key_file) with listen_plain = [ ("0.0.0.0", 80) ] } in
      { Server.default_config with listen = [ ("0.0.0.0", 443) ]; tls = Some tls }
    ]}
    Sockets handed over by systemd take their role by port
    ({!config.listen_fds}).

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
    [SIGUSR1] reopens the logs and nothing else ({!Supervisor}; without
    a supervisor, in place).
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


type tls = Config.tls
(** HTTPS: {!Config.tls}, where each field is documented. *)

val tls : cert_file:string -> key_file:string -> tls
(** {!Config.tls}. *)

type io = Config.io = Epoll | Uring  (** {!Config.io} *)

type config = Config.t
(** The server's settings: {!Config.t}, where each field and its default
    is documented. *)

val fd_reserve : int  (** {!Config.fd_reserve} *)

val max_default_connections : int  (** {!Config.max_default_connections} *)

val default_config : config  (** {!Config.default_config} *)

val parse_listen : string -> (string * int, string) result  (** {!Config.parse_listen} *)

val systemd_listen_fds : unit -> (int list, string) result
(** {!Listeners.systemd_listen_fds} *)

val cpu_count : unit -> int  (** {!Config.cpu_count} *)

val check : config -> (unit, string) result
(** {!Config.check} with the library's field names. *)

val run :
  ?on_start:(unit -> unit) ->
  ?on_stop:(unit -> unit) ->
  ?on_worker_start:(unit -> unit) ->
  ?on_worker_stop:(unit -> unit) ->
  config -> (Ctx.t -> unit) -> int
(** [run config handler] serves HTTP/1.1 on [config.host]:[config.port],
    calling [handler] once per request (see {!Ctx}), until SIGTERM or SIGINT,
    and is the process exit code: [0] after a graceful shutdown, [1] when the
    server could not start (address in use, bad host, …; the reason is
    logged on stderr). In a forked worker it never returns: the worker
    exits.

    {b Lifecycle hooks} (all default to nothing), against the worker
    model above:
    {ul
    {- [on_start ()]: once, in the process that called [run] (the
       supervisor, or the only process), once the sockets are open and
       before any worker starts: set-up that every worker inherits
       (a database schema, a cache warmed before the fork). Runs with
       the caller's privileges.}
    {- [on_worker_start ()]: in each worker, after it took
       {!config.user}'s ids and before it accepts a client (with one
       worker and no supervisor: in the process, before the start line):
       what must not cross a fork (a database connection pool, threads).
       It runs again in a worker restarted after a crash and in each
       worker of a new generation ([SIGHUP]).}
    {- [on_worker_stop ()]: in each worker after its graceful shutdown
       ([SIGTERM]/[SIGINT] drain, or [SIGQUIT] when a reload retires its
       generation), once its last exchange ended, and before it exits.
       Not run when the worker is killed or crashes.}
    {- [on_stop ()]: once, in the process that called [run], after every
       worker exited, before [run] returns.}}
    An exception from a hook is logged (one line) and never crashes the
    supervisor. From [on_start], or from [on_worker_start] in a worker
    of the first generation, it fails the start ([run] is [1]); from
    [on_worker_start] later, that worker exits and is restarted like one
    that died (with the same back-off). A worker must report that it
    serves within 10 s of its fork, [on_worker_start] included. A stop
    hook runs for at most [max 1 grace_period] seconds: past that the
    process logs a line and exits 1 (a hook stuck on a dead database
    does not keep a stopping server alive). *)

type reconfigured = {
  config : config;
  handler : Ctx.t -> unit;
  release : unit -> unit;  (** frees what [handler] holds (its open directories) *)
}
(** A configuration read again on [SIGHUP], with the handler made for it. *)

val run_reloading :
  ?on_start:(unit -> unit) ->
  ?on_stop:(unit -> unit) ->
  ?on_worker_start:(unit -> unit) ->
  ?on_worker_stop:(unit -> unit) ->
  config -> (Ctx.t -> unit) -> release:(unit -> unit) -> reconfigure:(unit -> (reconfigured, string) result) -> int
(** [run_reloading config handler ~release ~reconfigure] is {!run} (with
    its hooks), but
    [SIGHUP] calls [reconfigure] (in the supervisor, which always runs
    then, and keeps its privileges) for a new configuration and handler:
    checked and prepared as at start ({!Config.check}, certificates read,
    access log opened at its possibly new path), then served by a new
    generation of workers on the same sockets while the previous one
    finishes its requests (see Reload). On any error (the [Error] of
    [reconfigure], a configuration {!Config.check} refuses, a certificate
    that does not load) the line is logged and nothing changes. Changes
    that would take closing a socket or other ids are refused the same
    way: the listening addresses and their roles, the options of the
    listening sockets ([backlog], [send_lowat], [defer_accept]), [workers]
    and [user] take a restart. [release] frees what [handler] holds, called in the
    supervisor once the handler is replaced (or at exit); the workers keep
    their own copies. *)
