(** The protocol switch: a connection's events, whatever protocol it
    speaks now.

    Backends ({!Epoll_io}, {!Uring_io}), the loop ({!Loop}, {!Loop_state})
    and the in-memory runtime ({!Testing}) hand every event of a slot to
    the functions below, which pass it to the state machine of the slot's
    [mode] and answer the same {!Conn_action.t}: {!H1} (every connection
    starts so), {!H2_session} (an HTTP/2 connection, and [resume] of an
    HTTP/2 exchange) or {!Ws} (a WebSocket). This is the only module that
    looks at [mode] to choose a protocol, and the only one that calls more
    than one of them: the protocols do not know one another
    ([scripts/protocol_imports.sh] checks it).

    {2 Handovers}
    A connection leaves HTTP/1.1 at one of three points, each decided
    here:
    - before its first read, a TLS connection whose handshake selected
      "h2" (ALPN) becomes HTTP/2 ({!H2_session.takes_over});
    - {!H1.received} answers [Detach] to the first bytes of a plain
      connection (HTTP/2 on) that are HTTP/2's client preface (h2c with
      prior knowledge): they go to {!H2_session.begin_h2c}, which reads
      them as HTTP/2;
    - {!H1.written} answers [Detach] once a 101 left: when the handler
      accepted a WebSocket ({!Ws.accept}) the connection stays on the loop
      as one ({!Ws.start}); else the socket goes to the handler
      ({!Ctx.upgrade}) and the backend gets the [Detach].
    [Upgrade: h2c] is not one of them: such a request is an HTTP/1.1
    request like any other.

    Nothing here allocates: a match on [mode], then the protocol's own
    function. *)

type action = Conn_action.t =
  | Read
  | Write
  | Close
  | Linger
  | Wait
  | Detach  (** the socket goes to the handler: call {!detach}, and hand it over *)
  | Nothing
  | Read_buffered
  | Push
(** As {!Conn_action.t}. *)

val linger_ticks : int
(** How long a lingering close drains ({!H1.linger_ticks}). *)

val opened : Slot.t -> fd:int -> listener:int -> peer_len:int -> action
(** A new connection: HTTP/1.1 until a handover ({!H1.opened}). *)

val prepare_read : Slot.t -> action
val received : Slot.t -> int -> action
val written : Slot.t -> action
val blocked : Slot.t -> unit
val timeout : Slot.t -> action
(** As {!H1}'s, for a connection of any protocol. *)

val resume : Slot.t -> gen:int -> (Slot.t -> unit) -> action
(** [resume c ~gen k]: as {!H1.resume}; [c] may be an HTTP/2 exchange, the
    answer then being for its connection ({!Slot.carrier}). *)

val closed : Slot.t -> unit
(** The connection closed: the protocol's state goes (an HTTP/2 session, a
    WebSocket's, one accepted but whose 101 had not left too), then the
    slot is freed ({!H1.closed}). *)

val idle : Slot.t -> bool
(** Between requests (HTTP/1.1), with no stream open (HTTP/2), never for a
    WebSocket. *)

val drain : Slot.t -> action
(** The worker drains: an HTTP/2 connection queues GOAWAY(NO_ERROR)
    ({!H2_session.drain}); [Nothing] for others. *)

val going_away : Slot.t -> unit
(** The worker drains: a WebSocket starts its close handshake (1001,
    {!Ws.going_away}); nothing for others. *)

(** {2 Any protocol's output} *)

val hold : Slot.t -> bool -> unit
val arm_write_timer : Slot.t -> unit
val shutting_down : Slot.t -> unit
(** {!H1.hold}, {!H1.arm_write_timer}, {!H1.shutting_down}: about the
    slot's output, the same for every protocol. *)

val detach : Slot.t -> string
(** After [Detach]: {!H1.detach}. *)
