(** What one worker's event loop keeps whatever moves its bytes: the
    connection slots, the timer wheel, the listening sockets and their
    handlers, the idle list, the statistics, the access log and the
    shutdown state. The backends ({!Epoll_io}, {!Uring_io}) and the loop
    ({!Loop}) act on it; nothing here performs connection I/O. Its fields
    are exposed to them, as {!Slot}'s are.

    {2 Slots}
    [conns] has [max_connections + spare_slots] slots, created on first use
    and kept. A slot is free ([fd = -1]) or serves one connection;
    {!open_conn} takes one, {!release_slot} gives it back once the
    descriptor is closed.

    {2 Idle connections}
    Connections that hold no part of a request (between keep-alive
    requests, or not yet sent anything) are listed oldest first.

    {2 At the connection limit}
    New clients are first left to other workers for 100 ms
    ({!must_wait}). Then each client accepted closes the keep-alive
    connection idle longest, or a fresh one that has sent nothing for 1 s
    ({!admit}); when no connection qualifies (every one is mid-request,
    mid-handshake or just connected), the client is closed at once and
    counted ([refused]), as nginx does, and accepting pauses for 100 ms.
    A client thus meets a slot or a close within about 100 ms, never a wait
    as long as the header timeout.

    {2 Allocation}
    None on the request path. *)

type io = Config.io = Epoll | Uring

type params = {
  config : Config.t;
      (** the worker's settings, with its limits ({!Config.with_limits}):
          read from here, never copied *)
  alone : bool;  (** no other worker accepts on the same sockets *)
  totals : Totals.t option;
      (** the counters of every worker, made before they forked; [None]:
          this worker's alone *)
  log_fd : int;  (** access log fd, [-1] for none *)
}

val shared : Config.t -> listener_headers:string array -> keep:int -> Slot.shared
(** [shared config ~listener_headers ~keep]: the per-worker state every
    connection sees ({!Slot.create_shared}), from [config]: its sizes,
    timeouts (in timer ticks) and header lines, HTTP/2 when [config.http2]
    and the read buffer holds a frame ({!H2_session.min_read_buffer}),
    development mode, [keepalive_requests] (as [last_request]). What {!create} and
    {!Testing.create} build. Allocates. *)

(** What runs in front of a listener's handler: the stats endpoint
    behind its token (when [stats] is set), nothing (a redirect port), or
    the status alone, without a token ([--stats-listen]). *)
type front = With_stats | Bare | Status_only

type listener = {
  listen_fd : int;
  handler : Ctx.t -> unit;
  tls : Tls.server option;
  headers : string;
  front : front;
}

val tick_ms : int
val accept_pause_ns : int

val spare_slots : int
(** [64] slots beyond [max_connections]: the completion backend keeps a
    closed connection's slot until the kernel let go of its buffers. *)

type t = {
  p : params;
  lfds : int array;
  handlers : (Ctx.t -> unit) array;  (** per listener: the application *)
  fronts : front array;
  mutable entries : (Ctx.t -> unit) array;
      (** per listener: what a new request runs (the application, counted,
          behind the stats handler when configured) *)
  tls_servers : Tls.server option array;
  sfd : int;
  reactor : Reactor.t;
  dummy : Slot.t;
  conns : Slot.t array;
  free : int array;
  mutable nfree : int;
  mutable active : int;
  wheel : Timer_wheel.t;
  sh : Slot.shared;
  log : Access_log.t;
  per_client : Conn_limit.t option;  (** with [conn_limit]: who holds how many *)
  mutable limited : int;  (** clients closed at once: over [conn_limit] *)
  totals : Totals.t;  (** [p.totals], or a table of one row of our own *)
  mutable row : int;  (** this worker's row of [totals], [-1]: none *)
  mutable gauges_s : int;  (** when the connection gauges were last written *)
  gc : Gc_settle.t;  (** ticked once a second *)
  (* Idle connections, oldest first: a doubly linked list over slots. *)
  idle_prev : int array;
  idle_next : int array;
  idle_since : int array;  (** when each joined the list, ns *)
  mutable idle_head : int;
  mutable idle_tail : int;
  mutable evicted : int;
  mutable refused : int;  (** clients closed at once: at the limit, nothing to evict *)
  mutable refusing : bool;  (** refused one since the limit was last left (logged once) *)
  mutable closing : int;
      (** connections closed whose slot the completion backend keeps until
          the kernel lets go of it: they do not count against the limit *)
  mutable full_since_ns : int;  (** when the limit was reached; [0] below it *)
  mutable backend : io;  (** the one serving: [p.io], or epoll as a fallback *)
  mutable close : Slot.t -> unit;
  mutable start_conn : Slot.t -> Conn_action.t -> unit;
      (** a connection just accepted, and what it needs first *)
  mutable resume_accept : unit -> unit;
  mutable now_ns : int;
  mutable tick : int;
  mutable listening : bool;
  mutable accept_resume_ns : int;
  mutable accept_error_logged : bool;
  mutable draining : bool;
  mutable drain_deadline_ns : int;
  mutable retired : bool;
      (** SIGQUIT (the supervisor retiring this worker at a reload): drain
          with no deadline *)
  mutable hurried : bool;  (** SIGTERM or SIGINT: drain within [config.grace_period] *)
  mutable stop : bool;
  mutable log_flushed_s : int;
  mutable requests : int;
  mutable start_words : int;
  mutable excluded_words : int;
  mutable setup_words : int;
  mutable slots_created : int;
  mutable base_words : int;
  mutable base_requests : int;
  mutable final_words : int;
  mutable final_requests : int;
}

val words : unit -> int

val update_clock : t -> unit
(** Reads the clocks once per turn ([now_ns], [tick], and the connections'
    [sh.now], [sh.tick]). *)

val sync_timer : t -> Slot.t -> unit
(** Mirrors the connection's timer in the wheel. *)

val timeout_ms : t -> int
(** How long the loop may wait for events: until the next tick when timers
    or pauses are pending, until the reactor's next timer, else [-1]. *)

val idle_remove : t -> Slot.t -> unit

val waiting : t -> Slot.t -> unit
(** [c] waits for bytes: listed as idle if it holds no part of a request,
    else unlisted. *)

val may_accept : t -> bool
(** Worth accepting: a free slot (a client accepted at the limit gets one
    by {!admit}, or is refused at once). *)

val must_wait : t -> bool
(** At the limit: [true] while new clients are left to other workers (100 ms
    from reaching it). *)

val admit : t -> bool
(** A client was accepted: [true] when it gets a slot, below the limit or
    by closing an idle connection for it; [false]: the caller closes it and
    pauses accepting ({!pause_accepts}). *)

val at_limit : t -> bool
(** As many connections as [max_connections] (those closing aside): the
    next client needs an idle one closed. *)

val can_evict : t -> bool
(** {!admit} would find an idle connection to close. *)

val pause_accepts : t -> unit
(** Accepting stops for 100 ms ([accept_resume_ns]). *)

val open_conn : t -> int -> int -> unit
(** [open_conn w fd listener]: a connection just accepted takes a slot and
    its backend starts it ([start_conn], with what {!Connection.opened}
    asks first); with TLS, [c.ssl] is {!Openssl.none} if OpenSSL failed
    ({!tls_failed}: the backend closes it). *)

val tls_failed : t -> Slot.t -> bool

val accepted : t -> int -> int -> bool
(** [accepted w fd listener]: a client was accepted; it gets a slot
    ({!admit}, {!open_conn}), or is closed at once and accepting pauses
    ([false]: the backend stops listening until [accept_resume_ns]). *)

val accept_failed : t -> int -> unit
(** [accept_failed w err]: accept failed with [-err] (EMFILE, ENFILE,
    ENOBUFS, ENOMEM): retry in 100 ms rather than spin (the backend stops
    listening meanwhile); logged once per episode. *)

val hand_over : t -> Slot.t -> int -> string -> unit
(** [hand_over w c fd rest]: after a 101, frees the slot without closing
    [fd] and runs the handler's [upgrade] callback with the socket and the
    bytes the client sent after its head (an exception is logged). *)

val release_slot : t -> Slot.t -> unit
(** The connection's descriptor is closed or handed over: frees the slot
    (buffers back to the pools) and resumes accepting. *)

val start_drain : t -> bool
(** Starts the graceful shutdown ([false] if it had started). *)

val close_idle : t -> unit
(** Closes the keep-alive connections between requests; one that has not
    brought its first request yet keeps its header timeout (a client in
    flight, at a reload). *)

val read_signals : t -> bool
(** Handles the signals that arrived (SIGHUP: reopen the log, reload
    certificates); [true] when one asks to stop. *)

val end_of_turn : t -> on_timeout:(Slot.t -> unit) -> unit
(** Timers (the reactor's and the connections'), resumed accepts, the
    access log's flush, the end of a drain. *)

val create : params -> listeners:listener array -> signal_fd:int -> reactor:Reactor.t -> t
(** @raise Invalid_argument when [listeners] is empty. *)

val finish : t -> unit
(** Returns the pools' memory, flushes the log and prints the exit line. *)
