(** What a request handler sees and how it answers.

    The server owns one [Ctx.t] per connection slot, created at start-up
    and reused for every request on every connection that slot serves, so
    handling a request allocates nothing the handler does not allocate
    itself.

    {2 Lifecycle}
    The event loop calls the handler once per request, as soon as the head
    is parsed. If the request has a body that is already complete in
    memory (it arrived with the head, up to the read buffer's size, and is
    de-chunked), {!body_ready} is [true] and {!body} is that body. Otherwise
    the handler chooses:
    - it answers at once without the body (a 404, a 405, a redirect, a
      static file for a GET that carries a body): the body is never read,
      no [100 Continue] is sent, and the connection closes after the
      response (lingering up to 2 s to drain what the client still sends);
    - or it calls {!await_body} and returns without answering: the server
      sends [100 Continue] if the client waits for it, reads the body (up
      to the configured [max_body], at the minimum rate the server enforces)
      and calls the handler again, now with {!body_ready} [true].

    The handler must answer before it returns (except after
    {!await_body}): exactly one {!start} followed by any number of header
    calls, then exactly one body call ({!body_string}, {!body_bigstring},
    {!body_file}, {!no_body}, or {!chunked_start} … {!chunked_end}). A
    handler that returns without answering, or raises, gets a 500 written
    for it (through the application's error renderer when one is set,
    {!Errors}; if nothing was sent yet; else the connection is closed, and
    the access log records the status that was sent, cut); the exception
    is logged with the request and the backtrace; the worker goes on
    serving. Answering again after a complete response (a second
    {!start}, header or body call) raises {!Answered_twice}: the server
    logs "the handler answered twice" and sends the first response
    intact.

    {2 Ownership and validity}
    The request's spans point into {!buffer}, and {!body} into
    {!body_buffer}; both stay valid until the handler returns (after
    {!await_body}, the head is re-read into place before the second call,
    so keep no span across calls). A body that did not fit behind its head
    lives in a buffer of the worker's pool, given back when the response
    has been handed to the socket: a body-sized bigstring passed to
    {!body_bigstring} is copied if it cannot leave at once, but must never
    be passed to {!body_bigstring_stable}. The server
    adds [Date], [Server], [Content-Length] (or [Transfer-Encoding: chunked])
    and [Connection] itself, and suppresses the body of responses to HEAD
    and of 1xx/204/304 while keeping their framing headers (except that 1xx
    and 204 responses never carry [Content-Length] or [Transfer-Encoding],
    RFC 9110 §8.6, §6.1). *)

type t

exception Answered_twice
(** = {!Slot.Answered_twice}: a response call after the response was
    complete. Let it propagate: the server logs it and keeps the first
    response. *)

(** {1 The request} *)

val request : t -> Httpz.Request.t
val buffer : t -> Httpz.Bigstring.t
(** The buffer the request's spans refer to. *)

val body_ready : t -> bool
(** [true] when the request has no body or its whole body is in memory. *)

val body : t -> Httpz.Span.t
(** The request body (de-chunked), a span of {!body_buffer}; empty when the
    request has none.
    @raise Invalid_argument when {!body_ready} is [false]. *)

val await_body : t -> unit
(** [await_body c] asks for the body: return from the handler without
    answering, and it is called again once the body is complete (or the
    client gets 408 if it is not complete within the body timeout, 413
    past [max_body], 400 for a malformed chunked body).
    @raise Invalid_argument if {!body_ready} is [true] or a response was
    started. *)

val body_buffer : t -> Httpz.Bigstring.t

val client : t -> string * int
(** [client c] is the client's numeric address (IPv4 dotted, or IPv6; an
    IPv4-mapped IPv6 address shown as IPv4) and port. Allocates (one
    [getpeername]). *)

val peer_ip : t -> Bytes.t
(** [peer_ip c] is the client's address as 16 bytes of IPv6, network
    order (an IPv4 client as [::ffff:a.b.c.d]; all zeros when the socket
    has no IP peer), read once per connection (one [getpeername] at the
    first call) and kept in the connection's slot: valid until the
    connection closes; do not write it. Does not allocate. *)

val local : t -> string * int
(** [local c] is the server's own address and port of this connection, as
    {!client} shows addresses ([getsockname]). *)

val now : t -> int
(** Wall-clock seconds at the start of this event-loop turn (for dates). *)

val now_ms : t -> int
(** Monotonic milliseconds at the start of this event-loop turn (for
    freshness and timeouts): no clock read per request. *)

(** {1 The response head} *)

val start : t -> Httpz.Status.t -> unit
(** [start c status] begins the response: status line, [Date], [Server]. *)

val header : t -> Httpz.Header_name.t -> string -> unit
val header_s : t -> string -> string -> unit
val header_int : t -> Httpz.Header_name.t -> int -> unit
val header_date : t -> Httpz.Header_name.t -> int -> unit
val header_date_cached : t -> Httpz.Header_name.t -> Httpz.Date.Cache.t -> int -> unit
val header_span : t -> Httpz.Header_name.t -> Httpz.Bigstring.t -> Httpz.Span.t -> unit
val header_bytes : t -> Httpz.Header_name.t -> Httpz.Bigstring.t -> off:int -> len:int -> unit
(** Header writers, checking as {!Httpz.Response}'s do
    ([header_date_cached]: a date that repeats, formatted once through a
    {!Httpz.Date.Cache}). Each writes its field whole in the form of the
    protocol carrying the exchange ({!Slot.protocol}): a text line over
    HTTP/1.1; over HTTP/2, at once HPACK (a literal without indexing,
    the name lower-cased), with no text in between, and the fields
    HTTP/2 forbids (Connection, Keep-Alive, Transfer-Encoding, Upgrade,
    Proxy-Connection) checked, then left out.
    @raise Httpz.Response.Invalid_field for a name or value that would
    split the response; the server then answers 500 instead.
    @raise Httpz.Response.No_space when the head has no room left; the
    field is then not written. *)

val fields : t -> Httpz.Prepared_fields.t -> unit
(** [fields c p] adds the fields of [p] (checked and encoded when they
    were added to [p]) to the head: one copy, of the text lines over
    HTTP/1.1 and of the HPACK bytes over HTTP/2. [p] may change once this
    returns.
    @raise Httpz.Response.No_space when the head has no room left. *)

val head_buffer : t -> Httpz.Bigstring.t
val head_pos : t -> int
val set_head_pos : t -> int -> unit
(** HTTP/1.1 only: direct access to the head's text, for writers of
    their own: write ["Name: value\r\n"] lines at [head_pos] into
    [head_buffer], then [set_head_pos]. The space left is
    [Bigstring.length head_buffer - head_pos - 256] (256 bytes are kept
    for the server's own headers).
    @raise Invalid_argument on an HTTP/2 stream ({!version} [Http_2]),
    whose head is HPACK, not text. The protocol-neutral way is to write
    the value into a buffer of one's own and pass it to {!header_bytes}
    (as the static handler does with {!Httpz.Etag.write} and
    {!Httpz.Range.write_content_range}). *)

val version : t -> Httpz.Version.t
(** The protocol carrying the exchange: [Http_2] on an HTTP/2 stream,
    else the request's HTTP/1.x version ([Http_1_0] or [Http_1_1]), as
    {!Httpz.Request.version} of {!request} says too. *)

(** {1 The body} Each ends the head. *)

val body_string : t -> string -> unit
val body_bigstring : t -> Httpz.Bigstring.t -> off:int -> len:int -> unit
(** The bytes are copied (or sent with the head in one sendmsg) before
    the call returns or later by the loop; the caller must leave them
    unchanged until the handler returns. *)

val body_bigstring_stable : t -> Httpz.Bigstring.t -> off:int -> len:int -> unit
(** As {!body_bigstring}, but the caller promises the bytes stay unchanged
    until the response has been sent, not just until the handler returns
    (an immutable in-memory cache): they are then never copied, even when
    the client reads slowly. *)

val body_file : t -> fd:int -> off:int -> len:int -> close:bool -> unit
(** [body_file c ~fd ~off ~len ~close] sends [len] bytes of the open file
    [fd] from [off] with sendfile(2), after the head. With [close] the server
    closes [fd] when done (or when the connection dies). *)

val no_body : t -> content_length:int -> unit
(** [no_body c ~content_length] ends a response that carries no body bytes
    (304, HEAD, 204): [Content-Length] is written only when
    [content_length >= 0]. *)

val chunked_start : t -> unit
val chunk : t -> string -> unit
val chunk_bigstring : t -> Httpz.Bigstring.t -> off:int -> len:int -> unit
val chunked_end : t -> unit
(** A chunked body produced during the handler call. Chunks are copied into
    the connection's write buffer, which grows when it fills (this
    allocates); they are sent when the handler returns or calls {!flush},
    never while it runs. Over HTTP/1.1, more than 16 MiB of them waiting
    so is a programming error: [Invalid_argument] (flush to produce
    more). An empty chunk is ignored (it would end the body). To an
    HTTP/1.0 client, which has no chunked coding, the body is sent as is
    and delimited by closing the connection. *)

val close_after : t -> unit
(** Close the connection after this response (adds [Connection: close]).
    The header is written when the body call ends the head, so call this
    before the body call; called later, the connection is still closed,
    without the header. *)

(** {1 Streaming}

    A response body of unknown length is sent chunked ({!chunked_start});
    of known length, with [Content-Length] ({!fixed_start}). Either way the
    handler may {!flush} what it wrote so far and go on once the client
    has taken it: that is the backpressure, since nothing more is produced
    until then. *)

val fixed_start : t -> length:int -> unit
(** [fixed_start c ~length] ends the head with [Content-Length: length];
    the body follows through {!chunk} / {!chunk_bigstring} (sent as is,
    without framing) and ends with {!chunked_end}. The pieces must add up
    to exactly [length] bytes. *)

val flush : t -> (t -> unit) -> unit
(** [flush c k] sends what the open body holds so far: return from the
    handler (or continuation) now; [k c] runs when the client has taken
    all of it (the socket accepted it), and goes on with more {!chunk}s, a
    {!flush}, a {!sleep}, or {!chunked_end}.
    @raise Invalid_argument if no body is open or the handler already
    waits. *)

val read_body : t -> limit:int -> (t -> unit) -> unit
(** [read_body c ~limit k] reads the request body piece by piece: return
    from the handler now; [k c] runs with the next piece, {!body_piece} of
    {!body_buffer}, valid until [k] returns; it calls [read_body] again
    for the next one, or answers. The end of the body is an empty piece
    ({!body_ended}). Memory stays at one read buffer whatever the body's
    size; [100 Continue] is sent when the client expects it. A body over
    [limit] bytes (Content-Length, chunked as it arrives, or a body that
    came whole with the head) is answered 413 and closed. Answering before the end closes the connection after
    the response. *)

val body_piece : t -> Httpz.Span.t
val body_ended : t -> bool

(** {1 Answering later}

    A handler may return without answering after arranging to be called
    back on this worker's loop: by a timer ({!sleep}), by a descriptor's
    readiness ({!when_readable}), by blocking work done on a thread
    ({!offload}), or by anything that calls the function {!suspend}
    returns. The continuation is a handler again: it answers, or waits
    once more. Until then the connection waits with no buffer of its own
    in use beyond the request's; if the client hangs up, or the handler
    timeout ([Server.config.handler_timeout]) passes first (the client then
    gets 503), the continuation is dropped, what the wait was for is undone
    (the timer cancelled, the watch removed, the offloaded job dropped if
    it has not started) and {!on_cancel} hooks run.

    A wait keeps nothing once it is over: a handler may wait any number of
    times (a stream that sleeps between a million pieces) in constant
    memory. *)

val suspend : t -> (t -> unit) -> unit -> unit
(** [suspend c k] is [resume]: return from the handler now; [resume ()],
    called from anywhere on this worker's loop (a callback, an Lwt
    promise), runs [k c], at most once, if the request is still waiting.
    @raise Invalid_argument if the handler already waits or answered. *)

val suspend_with_cancel : t -> cancel:(unit -> unit) -> (t -> unit) -> unit -> unit
(** [suspend_with_cancel c ~cancel k] is {!suspend} for a wait that has
    something to undo: [cancel ()] runs if the request ends while it waits
    (before [resume ()] is called), and is forgotten as soon as [resume ()]
    is called, so it must not be needed after that (the event it waited
    for has happened). {!sleep}, {!when_readable} and the Lwt adapter wait
    this way. *)

val sleep : t -> float -> (t -> unit) -> unit
(** [sleep c seconds k]: [k c] runs [seconds] from now ([0.]: at the
    loop's next turn). *)

val when_readable : t -> Unix.file_descr -> (t -> unit) -> unit
val when_writable : t -> Unix.file_descr -> (t -> unit) -> unit
(** [when_readable c fd k]: [k c] runs once [fd] (an upstream socket, a
    pipe: non-blocking, owned by the caller) is readable. *)

val offload : t -> (unit -> 'a) -> ('a -> t -> unit) -> unit
(** [offload c work k] runs [work ()] on the worker's thread pool
    ([Server.config.offload_threads]), then [k v c] on the loop with its
    result (an exception from [work] makes the answer a 500). [work] must
    not use [c] or the server's state. If the request ends before a thread
    takes [work] (the client left, the handler timeout), it never runs.

    When [Server.config.offload_queue] jobs already wait for a thread,
    neither [work] nor [k] runs: [offload] answers at once for the handler,
    [503 Service Unavailable] with [Retry-After: 1] (through {!Errors}'
    renderer when one is set), and returns (the
    handler then returns too; it must not answer). If a response was
    started already, nothing is written, and the connection is closed as
    after any handler that returns without answering.
    @raise Invalid_argument if the handler already waits or answered. *)

val waiting : t -> bool
(** [waiting c]: the handler has arranged to be called back ({!read_body},
    {!suspend}, {!sleep}, {!offload}...) and that wait is pending. Right
    after {!offload} returns, [false] means the pool refused the job and
    answered 503: neither [work] nor [k] will run (so undo now what the
    job was to finish). *)

val on_cancel : t -> (unit -> unit) -> unit
(** [on_cancel c f]: [f ()] runs if the request ends before the handler
    answered in full (the client left, the handler timeout, the worker
    shut down), whether it was waiting or streaming a body. Once the
    response is complete ({!body_string}, {!chunked_end}, {!Ws.accept}...)
    the hook is dropped without running, even if the client then leaves
    before every byte reached it: what the handler did stands. Register
    it once per request (a wait's own undo belongs in
    {!suspend_with_cancel}, which forgets it when the wait is over). *)

(** {1 Handing the connection over} *)

val upgrade : t -> (Unix.file_descr -> string -> unit) -> unit
(** [upgrade c k] ends a [101 Switching Protocols] head the handler
    started ([start c Switching_protocols], then its [Upgrade] and e.g.
    [Sec-WebSocket-Accept] headers) with [Connection: Upgrade], and once it
    is sent calls [k fd rest]: the socket (non-blocking) is then the
    callee's to use and close — the server forgets it — and [rest] holds
    the bytes the client sent after its request head.
    @raise Invalid_argument unless a 101 head is open, or on a TLS
    connection ({!secure}): its socket carries TLS records that only the
    server can read, so it cannot be handed over. For WebSocket, use
    {!Ws.accept}: the connection stays on the loop, over TLS too. *)

val secure : t -> bool
(** The connection speaks TLS (the request came over https). *)

(** {1 Middleware hooks}

    What a wrapper ({!Middleware}) needs to see the response of a handler
    that answers later ({!suspend}, {!flush}, {!offload}): hooks that the
    server calls on this request's behalf. They belong to the request:
    when it ends, however it ends, they are forgotten, so a hook never
    runs for the next request on the same keep-alive connection or the
    next HTTP/2 stream of the pooled exchange.

    {b Allocation.} Register closures made at start-up (a middleware's
    own): the slot keeps room for 8 of each kind for its life, so
    registering allocates nothing after a slot's first request. A closure
    made per request allocates, like any closure. Registering the same
    closure again for a request (a wrapper called twice, after
    {!await_body}) is ignored. With no hook registered, a request costs
    one test of a boolean more than before. *)

val on_head : t -> (t -> unit) -> unit
(** [on_head c f]: [f c] runs once, when the handler's head is about to
    end (the body call, {!chunked_start}, {!fixed_start}, {!no_body},
    {!upgrade}; not {!Ws.accept}'s 101, which it writes itself), after
    the handler's own fields: [f] adds fields with the
    header writers ({!status_code} tells the status). Head hooks run in
    the order they were registered. The answers the server writes itself
    for a parsed request (a 408, a 413, the 500 for a failed handler) run
    it too, over both protocols ({!Exchange} writes them through [Ctx]);
    an answer written after a head that had already ended does not. An exception from [f] is logged
    and the response goes on without the fields [f] had not written yet
    (a header writer writes its whole field or nothing). On HEAD, 204 and
    304 it runs as for any head (fields stay; the body is dropped).
    @raise Invalid_argument once the head has ended. *)

val on_complete : t -> (t -> unit) -> unit
(** [on_complete c f]: [f c] runs exactly once when the exchange is over:
    when its last byte was handed to the socket ({!completed} [true]), or
    when it ended otherwise ({!completed} [false]): the client left, the
    handler timeout, a reset stream, a write error, the worker shut down.
    It runs before the access-log line is written; when the exchange
    ends otherwise, after the {!on_cancel} hooks (over both protocols). Completion hooks run innermost first (the reverse of their
    registration). During [f], {!status_code}, {!body_bytes_sent},
    {!elapsed_ns}, {!request_id}, {!route_pattern} describe the exchange;
    the request's spans are still valid, but [f] must not answer. An
    exception from [f] is logged and ignored. The first registration of a
    request reads the monotonic clock once (for {!elapsed_ns}). *)

val status_code : t -> int
(** The status of the response (as sent, or being written; a server's
    error answer that replaced the handler's included); [0] when none was
    started (a request cancelled before it answered). *)

val completed : t -> bool
(** In a completion hook: the whole response was handed to the socket. *)

val head_request : t -> bool
(** The request is HEAD (the body is not sent, {!body_bytes_sent} is 0). *)

val body_bytes_sent : t -> int
(** In a completion hook: the body bytes that left (the whole body when
    {!completed}; else those handed to the socket, never more than the
    body), as the access log counts them. *)

val elapsed_ns : t -> int
(** Nanoseconds since the request's first {!on_complete} registration
    (for a middleware: just before the handler ran); [0] when no
    completion hook was registered. Reads the clock. *)

val request_id : t -> string
val set_request_id : t -> string -> unit
(** The request's id ({!Middleware.Request_id}), [""] when none; it goes
    when the request ends. *)

val route_pattern : t -> string
(** The pattern of the route {!Route.handler} ran for this request (as
    registered: ["/todos/:id"], a mount's prefix; the sub-router's own
    pattern under {!Route.mount_router}), [""] when it ran none (an
    automatic answer, a 404). Recorded only for a request that
    registered a hook before the router ran ({!on_complete}, as
    {!Middleware.Route_metrics} does), so a request without middleware
    pays one test for it; cleared when that request ends. *)

val set_route_pattern : t -> string -> unit
(** For {!Route} (and a wrapper clearing it, [""]): ignored unless a hook
    is registered for the request; writes only when the value
    changes. *)

(**/**)

val busy_hook : (t -> unit) option ref
(* {!offload}'s 503 when the queue is full: set by {!Errors.set} to answer
   through the application's error renderer ([None]: the text answer). *)

external of_conn : Slot.t -> t = "%identity"
(* For the event loop: a connection slot is the handler's context. *)

external to_conn : t -> Slot.t = "%identity"
(* For the protocols that take a connection over from its handler ({!Ws}). *)
