(** Running a handler without a socket: request in, response out, in
    memory (what [Dream.test] and Go's [httptest] offer).

    {[
      let app = Testing.create (Route.handler (Route.compile routes)) in
      let r = Testing.request app "/users/42" in
      Testing.check_status 200 r;
      assert (Testing.header r "content-type" = Some "application/json");
      let r2 = Testing.request ~protocol:Http2 app "/users/42" in
      ...
    ]}

    {2 What runs}
    The server's own code, not a stand-in: a connection slot ({!Slot})
    is driven through the protocol switch's entry points ({!Connection}:
    [opened], [prepare_read], [received], [written], [timeout], [resume],
    [closed]) exactly as a backend drives it: HTTP/1.1 ({!H1}), and HTTP/2
    ({!H2_session}, {!H2_exchange}) when the client sends the h2c
    preface; its output is taken by {!Output.Walk}, the walk every
    transport runs, over a memory sink. Parsing, body reading (whole or
    streamed), [100 Continue], chunked and HTTP/2 framing, HPACK, error
    answers (400, 404/405 of {!Route}, 408, 413, 500, 503), the handler's
    timeouts and the pools' buffers are the server's. No socket, no
    listening port, no event loop of a server: the only descriptors are
    one epoll set (created once per process) for the reactor below, and,
    after a first {!Ctx.offload}, its pool's pipe.

    The client side is written here, apart from the server's encoders: an
    HTTP/1.1 request text, or HTTP/2 frames (HPACK literals); the response
    is read back from the bytes the server wrote (HTTP/1.1: status line,
    fields, body by Content-Length, chunked or close; HTTP/2: frames
    decoded with {!Httpz.H2_frame} and {!Httpz.Hpack_decoder}).

    {2 Time}
    Waits ({!Ctx.sleep}, {!Ctx.suspend}, {!Ctx.flush}, {!Ctx.offload},
    {!Ctx.when_readable}) are served by a {!Reactor} of this module's,
    installed as {!Reactor.current} while a request runs, on a {e virtual
    clock}: when nothing can happen at once, the clock jumps to the next
    timer (a [Ctx.sleep], or the connection's header, body or handler
    timeout), so a handler that sleeps 10 s answers at once, and one that
    never answers gets its 503 at [handler_timeout] without a real wait.
    Work outside the loop (an offloaded job, a watched descriptor) is
    waited for in real time (up to 30 s) before the clock moves.
    The clock is one per process; {!advance} moves it by hand.

    {2 Connections}
    A {!t} has one connection slot, reused by every request, as a worker
    reuses its slots: each {!request} opens a new connection in it (the
    client closes it once the response is over), so a state the slot
    keeps from one use to the next shows as a leak between two requests.
    HTTP/2 exchanges come from the runtime's pool as the server's do.

    {2 Not covered}
    TLS (and so ALPN h2: HTTP/2 here is h2c with prior knowledge),
    WebSocket and {!Ctx.upgrade} (no socket to hand over: the callback is
    not called), a client that reads slowly (the memory client takes every
    byte at once), several connections at once, the stats front
    ([/__httpz/stats]) and the access log. {!Ctx.client} is [("-", 0)] and
    {!Ctx.peer_ip} zeros (no peer address). *)

type t
(** A server of one handler, in memory: its settings, pools and slot. *)

val create :
  ?config:Config.t ->
  ?read_buffer:int ->
  ?write_buffer:int ->
  ?max_body:int ->
  ?header_timeout:float ->
  ?idle_timeout:float ->
  ?body_timeout:float ->
  ?write_timeout:float ->
  ?handler_timeout:float ->
  ?headers:(string * string) list ->
  ?server_name:string ->
  ?http2:bool ->
  ?dev_errors:bool ->
  (Ctx.t -> unit) ->
  t
(** [create handler]: the server's settings as {!Server.config} names
    them (sizes in bytes, times in seconds): [config] (default
    {!Config.default_config}) with the fields given one by one replaced,
    made into a worker's state as {!Server.run} makes it
    ({!Loop_state.shared}: every setting the connections read, such as
    [keepalive_requests], applies here too). [headers] are added to every response
    (default: [X-Content-Type-Options: nosniff]); with [http2] the h2c
    preface turns a connection into HTTP/2, when [read_buffer] is at least
    {!H2_session.min_read_buffer} (as {!Server.run} decides). *)

type protocol = Http1 | Http2

type response = {
  protocol : protocol;
  status : int;  (** [0] when no response head arrived *)
  headers : (string * string) list;
      (** in the order sent; HTTP/1.1 names as written, HTTP/2 names in
          lower case (as on the wire); no [:status] *)
  body : string;  (** without framing (chunks, DATA frames joined) *)
  trailers : (string * string) list;
  complete : bool;
      (** the response ended as its framing says (Content-Length reached,
          last chunk, END_STREAM, close); [false] when it was cut (the
          connection closed, the stream reset) or [limit] passed first *)
}

type jar
(** Cookies kept across requests, as a browser keeps them for one site. *)

val jar : unit -> jar

val cookie : jar -> string -> string option
(** [cookie j name]: the value the last [Set-Cookie] of [name] gave. *)

val request :
  ?protocol:protocol ->
  ?meth:string ->
  ?headers:(string * string) list ->
  ?body:string ->
  ?jar:jar ->
  ?limit:float ->
  t ->
  string ->
  response
(** [request t target] sends one request (default [GET], HTTP/1.1) on a
    new connection and is the response, once it ended or [limit] virtual
    seconds passed (default 600: a stream that never ends is cut there,
    and the connection closed, running the handler's cancel hooks).
    HTTP/1.1 adds [Host: test] and a [Content-Length] for a body (or a
    [POST]/[PUT]/[PATCH]) unless given; HTTP/2 sends [:authority] from
    [Host], names in lower case and no connection-specific fields, the
    body in DATA frames as the server's windows allow
    (@raise Invalid_argument when the server has HTTP/2 off). With [jar], its
    cookies go in a [Cookie] field (unless [headers] has one) and the
    response's [Set-Cookie]s are kept ([Max-Age=0] removes one). *)

val raw : ?limit:float -> t -> string -> string
(** [raw t bytes] sends [bytes] on a new connection, as they are (HTTP/1.1,
    pipelined requests, malformed ones), and is everything the server
    wrote until it closed or, with all of [bytes] read, waits for the next
    request — or until [limit] virtual seconds passed (a partial head
    then meets the header timeout: 408). *)

val run :
  ?protocol:protocol -> ?meth:string -> ?headers:(string * string) list -> ?body:string ->
  (Ctx.t -> unit) -> string -> response
(** [run handler target]: {!request} on a server made for it. *)

val header : response -> string -> string option
(** The first field of that name, ASCII case-insensitive. *)

val headers_named : response -> string -> string list
(** Every field of that name, in order. *)

val in_use : t -> int
(** Bytes of pooled buffers (read, head, write, body) taken now: [0]
    between requests, whatever the last one did. *)

val now : unit -> float
(** The virtual clock, in seconds (monotonic; its origin is arbitrary). *)

val advance : float -> unit
(** [advance seconds] moves the virtual clock on. Timers it makes due run
    at the next request's first turn. *)

(** {2 One connection, step by step}
    The runtime's lower layer, for tests of the state machines themselves
    (the transcript tests of [test/server/h1]): a connection slot of a given
    {!Slot.shared}, whose hooks stay the caller's, driven one action at a
    time; no reactor, no clock (the caller sets [sh.tick]). *)
module Conn : sig
  type t

  type outcome =
    | Waiting  (** wants bytes the client has not sent *)
    | Closed  (** closed ({!Connection.closed} was called) *)
    | Lingering  (** a lingering close began ({!Connection.shutting_down} was called) *)
    | Suspended  (** the handler waits ([Wait]) *)
    | Detached  (** the socket goes to the handler: the caller calls {!Connection.detach} *)
    | Idle  (** nothing to do now ([Nothing]) *)

  val create : ?window:int -> ?leaves_after:int -> Slot.shared -> t
  (** A free slot of [sh]. Each write call of the transport takes at most
      [window] bytes (a slow socket; default: all); once the output not
      yet {!take}n reaches [leaves_after] bytes, the client is gone (the
      write fails as on a reset). *)

  val slot : t -> Slot.t
  val set_window : t -> int -> unit
  val set_leaves_after : t -> int -> unit

  val set_write_size : t -> int -> unit
  (** [set_write_size p n]: each write of the transport takes at most [n]
      bytes (a short write; the walk goes on), default all. *)

  val gathered_writes : t -> int
  (** Gathered writes (HTTP/2 payloads between the frames of [out],
      {!Output.segment} [Gathered]) since {!reset_counts}... *)

  val most_pieces : t -> int
  (** ... and the most pieces one of them carried. *)

  val reset_counts : t -> unit

  val gathered_bytes : Slot.t -> string
  (** The bytes a gathered write of [c] sends now: the rest of [out] with
      the pieces between its frames (as [Syscall.sendv_gather] lays them
      out). *)

  val drive : t -> Conn_action.t -> outcome
  (** [drive p a] does what a backend does with [a] ([Write]: the output
      walk until it is all out, {!Connection.blocked} between short writes; [Read]:
      the client's unread bytes, as much as {!Connection.prepare_read} asks at a
      time, until none is left) and with every action that follows, until
      one needs the client or the handler. *)

  val open_ : ?fd:int -> t -> outcome
  (** {!Connection.opened} (on a descriptor no process has, unless [fd]), driven. *)

  val send : t -> string -> unit
  (** The client sends bytes (read at the next [Read]). *)

  val exchange : t -> string -> outcome
  (** [send], then [drive p Read]. *)

  val take : t -> string
  (** What the server wrote since the last [take]. *)

  val written : t -> string
  (** The same, left in place. *)
end

(** {2 Checks}
    Each raises [Failure] with what was expected and what came (a test
    framework such as Alcotest reports it as the test's failure). *)

val check_status : int -> response -> unit
val check_header : string -> string -> response -> unit
val check_body : string -> response -> unit
