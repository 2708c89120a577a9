(** The exchange of one HTTP/2 stream: a {!Slot.t} that handlers see as a
    [Ctx.t], taken from the worker's pool ([sh.exchanges_free]; not a
    connection slot: its [slot] is [-1], its [fd] and [ssl] are its
    connection's, for [Ctx.client] and [Ctx.secure]) when the stream's
    HEADERS arrive and given back when it ends. {!H2_session} drives it.

    {b The request.} The decoded head is written into the exchange's read
    buffer as an HTTP/1.1 head (the method, the path, [:authority] as Host,
    the fields, cookie crumbs joined into one Cookie field) and parsed
    there by [Httpz.Request], so handlers get the spans and checks they
    know; the request line is then marked [HTTP/2.0] for the access log. A
    head that does not fit gets 431, one the parser refuses its 4xx, one
    whose Host names another host than [:authority] 400 (RFC 9113 §8.3.1),
    without a handler. What the exchange takes from its connection (its
    stream, descriptor, listener, TLS, the address for the log) is set for
    every stream ([bind]): the record is pooled, and what its last stream
    (another client's, perhaps) left there must not survive; the client's
    address is asked of the connection ([Ctx.peer_ip]).

    {b Bodies.} A request that ends with its HEADERS has none. Any other
    body is the handler's to ask for, and the handler runs at once:
    [Ctx.await_body] (read whole up to [max_body]) or [Ctx.read_body]
    (pieces, straight from the connection's read buffer when the handler
    waits for one, else kept in [body_store]). DATA is credited to the
    client's windows as the handler takes it, so a body nobody reads stops
    at the stream window and a handler that answers without it (a GET to a
    file) buffers nothing. A body read whole is credited as it arrives to
    both windows only while the connection's whole bodies stay within a
    budget (the larger of [max_body] and 1 MiB; [Slot.h2.whole_bodies]),
    and for one exchange at a time past it ([Slot.h2.whole_pass]), so
    bodies that together exceed it complete one after another; the
    others' bytes are owed (credited to neither window, so each stream's
    window bounds them) and paid as exchanges end. A body waiting only
    for owed credit is not timed out. Waiting for body bytes runs the body clock
    of HTTP/1.1 ({!Slot.start_body_clock}): [body_timeout] in all, moved on
    only by bytes arriving at {!Slot.min_body_rate} on average.

    {b The response} goes through {!H2_response}. The exchange ends (is
    logged, and gives its slot and buffers back) once its END_STREAM (or
    RST_STREAM) is queued and its frames are all in the connection's
    output buffer ({!emitted}), or, for file bytes sent from its
    descriptor, once they left ({!settle}); a stream the client then
    still sends DATA on is reset with NO_ERROR (RFC 9113 §8.1) by
    {!H2_session}. Such a stream has no exchange and no timer: the
    connection's idle timer runs once no exchange is in progress, the
    connection can be evicted, and draining ends it after its GOAWAY.
    The body bytes that left are counted per stream
    ([H2_connection.data_sent]) for the log line of a response cut short.

    {b The handler} runs through {!Exchange}, the lifecycle HTTP/1.1
    shares (failures, the development page, error answers, the handler
    timeout); this module carries out its steps on the stream: a complete
    answer or the server's own is queued ({!H2_response.queue_rest}), a
    response that cannot be completed is reset (INTERNAL_ERROR).

    {b Ending early.} RST_STREAM from the client, a connection that closes
    ({!cancel}, {!cancel_all}): as for an HTTP/1.1 connection that closes
    ([Exchange.ended]), the request's [cancels] run (unless it was
    answered in full), then its completion hooks and its log line (cut:
    the status begun, the body bytes that left), and its continuations
    are dropped ([gen] changes).

    {b Allocation.} None per stream once the pools hold what one needs
    (test/server/h2server); an exchange slot is created when the pool is empty. *)

val find : Slot.h2 -> int -> int
(** [find s stream]: the index in [s.streams] of the stream's exchange, or
    [-1]. *)

val opened : Slot.h2 -> Slot.t -> stream:int -> fin:bool -> unit
(** [opened s c ~stream ~fin]: HEADERS opened [stream] on connection [c]
    ([fin]: with END_STREAM); the head is [H2_connection.head]. Takes an
    exchange and runs the handler. *)

val data : Slot.t -> Httpz.Bigstring.t -> off:int -> len:int -> fin:bool -> unit
(** [data x buf ~off ~len ~fin]: body bytes of [x]'s stream (valid during
    the call), [fin] the end of the request. *)

val cancel : Slot.h2 -> int -> sent:int -> unit
(** [cancel s stream ~sent]: the client reset the stream, whose DATA had
    put [sent] body bytes in the output: its exchange, if any, ends. *)

val cancel_all : Slot.h2 -> unit
(** The connection closed: every exchange ends. *)

val emitted : Slot.h2 -> ext_fd:int -> unit
(** Called once the connection's output buffer was filled: exchanges whose
    response is all in it end (but the one whose file descriptor [ext_fd]
    the buffer's send still reads from). *)

val settle : Slot.h2 -> unit
(** Called when the connection's output has all left: exchanges whose
    response is out end; a handler waiting on [Ctx.flush] whose piece left
    goes on; a complete response waiting for its turn is queued. *)

val next_deadline : Slot.h2 -> int
(** The earliest tick at which an exchange's wait times out, [-1] when
    none waits. Each exchange keeps its own timer ([timer], [deadline]):
    its handler's answer ([handler_timeout]), its body ([body_timeout],
    moved by its own DATA at the minimum rate only), the client's window for its response
    ([write_timeout], moved as its bytes leave). Traffic on other streams
    or PINGs do not move it. *)

val expire : Slot.h2 -> unit
(** The exchanges whose wait timed out ([deadline <= tick]): a handler
    that never answered gets 503 (its continuations dropped), a body that
    stopped coming 408, a response the client's window holds back is reset
    (CANCEL); the others go on. *)

val resume : Slot.t -> gen:int -> (Slot.t -> unit) -> bool
(** As [H1.resume] for an exchange: [true] when the continuation ran now
    (the connection then has output to look at). *)
