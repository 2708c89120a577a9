(** The readiness backend: connections driven by level-triggered epoll,
    their bytes moved with one system call each through their transport
    ({!Transport}: plain TCP or TLS).

    Under [io = Epoll] it serves every connection and accepts them; under
    [io = Uring] it serves the TLS connections (OpenSSL reads and writes its
    socket itself) and, with several workers, accepts for the ring (see
    {!Loop}); the ring then watches its epoll set.

    {2 Readiness}
    Each connection is registered for exactly one of [EPOLLIN] (reading a
    head or a body, or draining before a close), [EPOLLOUT] (a response the
    socket could not take at once) or [EPOLLRDHUP] (a handler waits: only a
    hang-up matters), so a ready descriptor always means work for its
    current state. Level-triggered lets the loop do {e one} read per
    readiness and come back later (fair to other connections); the price,
    an extra [epoll_ctl] when a write blocks, is paid only under
    backpressure. A connection enters epoll only when it first has to wait:
    one accepted with its request already there ([TCP_DEFER_ACCEPT]) and
    answered at once never does.

    Functions that may close [c] leave [c.fd = -1]; callers check it.
    Nothing here allocates on the keep-alive path. *)

type t = private {
  w : Loop_state.t;
  epfd : int;
  interest : int array;  (** per slot: the events registered in [epfd], [0] when none *)
}

val create : Loop_state.t -> int -> t
(** [create w epfd]: the backend of [w]'s connections over [epfd]. *)

val perform : t -> Slot.t -> Conn_action.t -> unit
(** Carries out what the connection needs next. *)

val ready : t -> Slot.t -> unit
(** [c]'s descriptor is ready. *)

val start : t -> Slot.t -> Conn_action.t -> unit
(** [start e c first]: a connection just accepted, and what it needs first
    ({!Connection.opened}): a read is tried at once (its request is usually
    there), or it waits for it. *)

val close_conn : t -> Slot.t -> unit
(** Sends TLS's close_notify, releases the transport, closes the descriptor
    (after a shutdown when the last bytes were held with [MSG_MORE]) and
    frees the slot. *)

val accept_ready : t -> int -> unit
(** Listener [i] is readable: accepts up to 64 connections, leaving them to
    other workers for a while at the connection limit ({!Loop_state.must_wait})
    and pausing 100 ms on [EMFILE] and the like. *)

val listen_token : t -> int -> int
(** The epoll token of listener [i]. *)

val resume_accept : t -> unit
(** Registers the listening sockets ([EPOLLEXCLUSIVE]: one worker woken per
    connection, preferring one that waits) unless accepting is paused or
    pointless. *)

val stop_listening : t -> unit
val close_listeners : t -> unit
