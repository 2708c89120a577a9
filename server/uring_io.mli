(** The completion backend ([io = Uring]): plain connections driven by
    io_uring ({!Httpz_sys.Uring}).

    {2 How bytes move}
    - Accepting: multishot accepts on the listening sockets when the worker
      is alone on them (see {!Loop}). One claims every client waiting in
      the listen queue at once; they are held, oldest first, and admitted
      as the readiness backend would take them from the queue
      ({!Loop_state.admit}: at the limit, each closes an idle connection),
      so that clients arriving together at the limit are not closed for
      it; while any is held, the ring accepts no more.
    - Receiving: one multishot receive per connection into the ring's
      provided buffers (256 of 4 KiB): the kernel takes a buffer only when
      bytes arrive, so an idle connection holds none. Received bytes queue
      per connection (the provided buffers themselves, linked) until the
      state machine asks for them; they are copied into its read buffer
      then. A connection that has 64 KiB queued without reading them has
      its receive cancelled until it has read them: one client cannot take
      the ring from the others.
    - Sending: [out] and a stable bigstring body as one sendmsg request.
      Bodies the kernel must not read later (an OCaml string, which the GC
      may move; a bigstring the handler may reuse) and file bodies are
      written at once as on the readiness backend, resumed on a POLLOUT
      completion when the socket is full.
    Requests queue up during a loop turn and reach the kernel together at
    the start of the next one, in the [io_uring_enter] that also waits.

    {2 Lifetimes}
    A request references its connection's buffers until it completes. A
    connection that closes with requests in flight cancels them and keeps
    its slot, buffers and descriptor until the last completion
    (the worker keeps spare slots for this, {!Loop_state.spare_slots}).

    Nothing here allocates on the keep-alive path. *)

type t

val create : Loop_state.t -> Epoll_io.t -> (t, int) result
(** Sets up this process's ring: [Error (-errno)] where the kernel refuses
    it (the caller falls back to epoll). *)

val on_ring : t -> Slot.t -> bool
(** [c] is served by the ring (not by the readiness backend). *)

val is_closing : t -> Slot.t -> bool

val start : t -> Slot.t -> Conn_action.t -> unit
(** [start u c first]: a plain connection just accepted, driven by the ring
    from now on, and what it needs first ({!Connection.opened}: its
    receive armed). *)

val perform : t -> Slot.t -> Conn_action.t -> unit
val close : t -> Slot.t -> unit

val resume_accept : t -> unit
(** Arms a multishot accept on every listening socket that has none,
    unless accepting is paused or pointless. *)

val stop_accepting : t -> unit

val arm_epoll : t -> unit
(** Watches the readiness backend's epoll set (multishot poll): the TLS
    connections, the signalfd, the reactor's descriptors. *)

val set_on_epoll : t -> (unit -> unit) -> unit
(** What runs when the epoll set is ready. *)

val turn : t -> timeout_ms:int -> unit
(** Submits what is queued, waits at most [timeout_ms] (negative: no limit)
    for completions, and handles them. *)

val shutdown : t -> unit
(** At exit: tears the ring down (the kernel lets go of every buffer), then
    closes the connections it served. *)
