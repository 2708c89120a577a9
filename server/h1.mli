(** The HTTP/1.1 connection state machine, sans I/O.

    It drives one {!Slot.t} through its life — request head, body, handler,
    response, next request — fed with events by a backend ({!Epoll_io},
    {!Uring_io}) and a transport ({!Plain}, {!Tls}), and answers every
    event with the {!action} the connection needs next. It knows no
    socket, no event loop and no clock of its own: bytes arrive in the
    buffer that {!prepare_read} designates, output is described by
    {!Output} and acknowledged with {!Output.advance}, and time is
    [c.sh.tick]; the connection's timer is [c.timer] due at [c.deadline],
    which the backend mirrors in its timer wheel. The transcript tests
    (test/server/h1) drive it from memory alone, through the same output walk.

    {2 Who writes the slot}
    This module, {!Slot} (its buffers and timers), {!Output} (the pending
    output), {!Exchange} (the handler's lifecycle) and {!Ctx} (the
    handler's answer, through the protocol {!H1_response}) write an
    HTTP/1.1 slot's fields (HTTP/2 and WebSocket have their own writers,
    listed in {!Slot}); backends, transports and the loop read them and
    call these functions through {!Connection}
    ([test/project/structure/field_writers_test.sh] counts the writers).

    {2 A connection's life}
    {!opened} → [Reading_head] → ([Reading_body]) → handler → [Writing] →
    {!written} → next request (parsed from bytes already buffered when
    pipelined), or [Linger]/[Close]. No further request is read until a
    response is out, so pipelined answers stay in order.

    {2 Bodies}
    The handler runs as soon as a head is parsed. A body complete in the
    read buffer is handed over with it; any other is read only when the
    handler asks ([Ctx.await_body], which also decides [100 Continue]),
    against a total deadline that only data arriving at
    {!min_body_rate} moves; a handler that answers without it closes the
    connection after its response, lingering to drain the body.

    {2 Buffers}
    Buffers come from the worker's pools ({!Slot}): a read buffer from
    {!prepare_read} on, a write buffer from the handler's call on; both go
    back when the connection is idle between requests ({!process} answers
    [Read] with none held).

    {2 Failures and the access log}
    The handler's lifecycle is {!Exchange}'s, shared with HTTP/2: this
    module runs it ([Exchange.run]) and carries out the step it returns.
    A handler (or a continuation) that raises is logged ({!Log.msg}) with
    the request's method and target, the client's address and the
    backtrace when one was recorded. Before any byte of its response
    left, the client gets a 500 (in development mode, [sh.dev_errors], a
    page showing the exception to a client on the loopback; else through
    the application's renderer when one is set, {!Errors}), written
    through {!Ctx} as every error answer for a parsed head is, and the
    connection closes after it; after, the connection closes at once.
    After a complete response, a second answer ({!Slot.Answered_twice}) or
    a late exception is only logged: the first response goes out intact.

    Each response is logged once ([sh.hooks.log]), when it is over: in
    {!written} when its last byte was handed to the socket, or in
    {!closed} when the connection closed first (cut: [Exchange.ended],
    which runs the cancel hooks of a handler that had not answered in
    full first). The line holds
    what the client got: the status sent, the body bytes that left, the
    time to that moment.

    {2 Other protocols on the connection}
    This module knows HTTP/1.1 only, and is called for a slot in mode
    [H1_mode] only: the protocol switch ({!Connection}) hands the events of
    an HTTP/2 connection or a WebSocket to their own state machines. When
    the connection stops being HTTP/1.1's, the answer is [Detach] and the
    switch decides who takes it: to a read of the first bytes of a plain
    connection (HTTP/2 on) that are HTTP/2's client preface (RFC 9113
    §3.4: h2c with prior knowledge), and when a 101 left ({!written}: a
    WebSocket the handler accepted, or the socket for {!Ctx.upgrade}).

    {2 Allocation}
    None on the steady-state path: parse, handler, response, next request
    (tested). Allocation happens when a pool has no spare buffer, when a
    chunked response outgrows its write buffer, and on error paths that
    log. *)

type action = Conn_action.t =
  | Read  (** wants bytes: call {!prepare_read}, read, then {!received} *)
  | Write
      (** has output: write [out] and [ext] (calling {!advance}); then
          {!written} when all of it left, or {!blocked} when the peer does
          not take more now *)
  | Close  (** close the connection now, then call {!closed} *)
  | Linger
      (** shut down the write side, then drain input (as [Read], into a
          scratch buffer) until the peer closes or the timer fires; then
          close *)
  | Wait
      (** the handler waits for an event of its own ({!Ctx.suspend}): no
          I/O until {!resume}; only the peer's hang-up (close) or the
          handler timer ({!timeout}) ends the wait *)
  | Detach
      (** the socket goes to the handler ({!Ctx.upgrade}): call {!detach},
          free the slot without closing the descriptor, and hand both
          over. From this module: HTTP/1.1 is over on the connection, the
          switch ({!Connection}) decides who takes it *)
  | Nothing  (** no I/O is due now (a continuation that runs later, or never) *)
  | Read_buffered  (** see {!Conn_action.t} *)
  | Push  (** see {!Conn_action.t} *)

val min_body_rate : int
(** [1024] bytes per second. *)

val linger_ticks : int
(** [20]: a lingering close drains for at most 2 s. *)

val opened : Slot.t -> fd:int -> listener:int -> peer_len:int -> action
(** [opened c ~fd ~listener ~peer_len]: a new connection in slot [c], on
    descriptor [fd] accepted by [listener] ([peer_len] bytes of its
    address in [c.peer]); arms the header timer and is what the backend
    does first. *)

val closed : Slot.t -> unit
(** [closed c]: the backend closed the connection (or handed it over);
    logs a response that was not over as cut, gives every buffer back and
    frees the slot ([fd = -1]). Of every connection, whatever its protocol,
    once that protocol's own state went ({!Connection.closed}). *)

val prepare_read : Slot.t -> action
(** Sets [c.in_buf], [c.in_off], [c.in_len] to where the next bytes go and
    answers [Read]; or answers another action when no read is due. *)

val received : Slot.t -> int -> action
(** [received c n]: [n > 0] bytes were put at [c.in_buf] from [c.in_off];
    [n <= 0] is the end of the stream. Parses, runs the handler, …
    [Detach] (and nothing parsed) when they are the first bytes of a plain
    connection with [sh.http2], and start with HTTP/2's client preface: the
    connection is HTTP/2's, [c.rbuf\[0, rlen)] its first bytes. A first
    line that is neither (three tokens, the last no HTTP version) is
    closed without an answer there: h2c's "invalid preface". *)

val later_received : Slot.t -> int -> action
(** [later_received c n]: {!received} on a connection that served a
    request already ([c.served > 0]), whose bytes cannot be a preface: the
    switch's keep-alive path, one test shorter. *)

val hold : Slot.t -> bool -> unit
(** [hold c last]: the output submitted now goes with [MSG_MORE] when it
    is the [last] before a close ([held]: the close must shut the write
    side first to release it). *)

val arm_write_timer : Slot.t -> unit
(** A write was submitted: the peer has [write_timeout] to take it. *)

val shutting_down : Slot.t -> unit
(** The backend is about to shut the write side ({!Linger}): the response
    owns no file any more, and nothing is held back by [MSG_MORE]. *)

val written : Slot.t -> action
(** All output was written (handed to the transport); a response whose
    last byte it was is logged. [Detach] once a 101 left ([after] is
    [Then_detach]). *)

val blocked : Slot.t -> unit
(** The peer takes no more output now: keeps what must outlive the
    handler (copies a non-stable body) and arms the write timer. *)

val timeout : Slot.t -> action
(** The connection's timer fired. *)

val resume : Slot.t -> gen:int -> (Slot.t -> unit) -> action
(** [resume c ~gen k]: a suspended handler's continuation [k] is ready
    (made for the request of generation [gen]). Runs it as the handler
    when the connection still serves that request and waits for it; if
    the handler has not even returned yet, [k] runs as soon as it does
    ([Nothing] now); a continuation of a request that ended is dropped
    ([Nothing]). *)

val detach : Slot.t -> string
(** [detach c] ends the request of an upgraded connection and is the bytes
    the client sent after its head (the new protocol's first bytes). *)

val idle : Slot.t -> bool
(** Between requests, with no byte of the next one yet. *)

val respond_error : Slot.t -> Httpz.Status.t -> string -> parsed:bool -> action
(** Replaces a response of which nothing left yet with a short text
    error answer and closes after it; answers [Close] when part of the
    response left already (it cannot be replaced). For a parsed head
    ([parsed]) it is [Exchange.error] (cancel hooks, {!Errors}, through
    {!Ctx}); for one that did not parse, a fixed answer. *)
