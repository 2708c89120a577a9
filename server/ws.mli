(** WebSocket (RFC 6455) messages on the worker's loop, over ws:// and
    wss://, on both backends.

    A handler accepts an upgrade with {!accept}: the handshake and its
    [Origin] are checked ({!Httpz.Ws_handshake}), permessage-deflate negotiated
    ({!Httpz.Ws_extension}, RFC 7692, when [config.deflate]), and the [101]
    written. Once it left, the protocol switch ({!Connection}) makes the
    connection a WebSocket ({!start}): it stays in its slot, with its
    backend and its transport (TLS too), in mode [Websocket], and the
    switch hands its events to the functions at the end of this
    interface, which answer with the same {!Conn_action.t}, so the
    backends do not know the protocol.

    {2 Receiving}
    Frames are read from the slot's read buffer by {!Httpz.Ws_reader}
    (unmasked in place, UTF-8 of text checked as it arrives). A message is
    given to [on_message] as a span: of the read buffer itself when it
    arrived whole in one read (no copy), else of a reassembly buffer from
    the worker's body pool (fragments, or a message cut by reads), or of
    the inflater's output (compressed). The span is valid during the
    callback only. Pings are answered (pong) automatically. Protocol
    errors close with their code: 1002 (masking, reserved bits or
    opcodes, control frames, fragmentation), 1007 (invalid UTF-8, corrupt
    deflate data), 1009 (a message, or its inflated size, over
    [max_message]), 1011 (a callback raised).

    {2 Sending}
    {!send} copies the payload into the connection's queue; {!send_shared}
    sends a payload the caller never modifies again from where it is (a
    broadcast: one bigstring for every connection, the frame header alone
    is per connection) when the queue is empty and the transport allows
    (plain TCP; TLS encrypts, so copies, as does permessage-deflate). The
    queue is bounded by [max_send_buffer]: a peer that does not read is
    disconnected ([on_close] with 1006) rather than holding memory; others
    are not affected. {!flush} gives backpressure: its continuation runs
    once every byte queued before it was handed to the transport.

    A send from another connection's callback or a timer wakes the
    connection through the loop ([hooks.resume]); a send from the
    connection's own callback waits for the callback to return.

    {2 Closing}
    {!close} sends a Close with a code and reason; the peer's Close is
    awaited (5 s), then the connection shuts its write side and drains
    (lingering close). A Close from the peer is answered with its code.
    [on_close] is called once, with the code (the peer's, ours, or 1006
    when the connection dropped). Without traffic for
    [ping_interval_ms] a Ping is sent; without any byte from the peer for
    [idle_timeout_ms] the connection is closed (1001).

    {2 Buffers}
    An idle WebSocket (no partial frame, nothing to send) holds no pool
    buffer: the read buffer (and its parse state) is taken when bytes
    arrive and given back when every byte of it was read (the frame
    reader keeps a partial header in its own state); [out] and the queue
    when they are written. A message arriving in pieces holds its
    reassembly buffer until it is complete. Per connection: the session
    record, the frame reader (two small buffers) and, with deflate, zlib
    streams (created on first use).

    {2 Allocation}
    Receiving a message allocates nothing, whether it arrived whole, in
    fragments or compressed, and neither does sending one (test/server/ws: 0
    words per message), unless a pool has no spare buffer or a zlib
    stream is created (the first compressed message; each one when the
    client keeps no context). {!flush} allocates its list cell, a
    callback that raises its log line; {!accept} allocates the session. *)

type t
(** A WebSocket connection (the slot, while in WebSocket mode). *)

type kind = Text | Binary

type origins = Httpz.Ws_handshake.origins
(** Which pages may open the WebSocket ({!Httpz.Ws_handshake.origins}):
    built once, at configuration time. *)

val same_origin : origins
(** The default: no [Origin] (not a browser), or one naming the request's
    own [Host]; never [Sec-Fetch-Site: cross-site]. *)

val allow_origins : string list -> origins
(** [allow_origins ["https://app.example.com"]]: {!same_origin} and these
    origins (scheme, host and port as the browser sends them). *)

val any_origin : origins
(** No check: only for a WebSocket that trusts nothing the browser sends by
    itself (cookies, HTTP authentication). *)

type config = {
  max_message : int;  (** largest message received (bytes, inflated); 1009 past it *)
  max_send_buffer : int;
      (** bytes queued for a peer before it counts as not reading; one
          message is always accepted into an empty queue *)
  ping_interval_ms : int;  (** [0]: no pings *)
  idle_timeout_ms : int;
  deflate : bool;  (** accept permessage-deflate when offered *)
  origins : origins;  (** a cross-origin upgrade gets 403 *)
}

val default_config : config
(** 1 MiB messages, 4 MiB queue, a ping every 30 s, 90 s idle, deflate
    on, {!same_origin}. *)

type handlers = {
  on_message : t -> kind -> Httpz.Bigstring.t -> off:int -> len:int -> unit;
  on_close : t -> int -> unit;
}

val accept : ?config:config -> ?protocols:string list -> Ctx.t -> handlers -> bool
(** [accept ctx h] answers the request with [101] and makes its
    connection a WebSocket ([true]); or answers and is [false]:
    - [400] (or [426] for another version) when the request is not a
      valid upgrade;
    - [403] when it comes from an origin [config.origins] refuses
      (cross-site WebSocket hijacking: by default a browser page of any
      origin but the server's own), checked after the handshake;
    - [400] ["WebSocket needs HTTP/1.1"] over HTTP/2, where no upgrade
      exists (RFC 8441's extended CONNECT is not implemented, and not
      advertised, so browsers open their WebSockets over HTTP/1.1): a
      plain answer, no handler failure.
    Either way the response is complete, and the handler should return.
    Messages may be sent at once (they follow the 101). [protocols]: the subprotocols the application
    speaks, by preference; the first one the client offers
    ([Sec-WebSocket-Protocol]) is answered ({!protocol}); none in common:
    the upgrade goes on without one, as RFC 6455 §4.2.2 lets the client
    decide whether to stay.
    @raise Invalid_argument when the response was started. *)

val send : t -> kind -> Httpz.Bigstring.t -> off:int -> len:int -> unit
(** Queues one message (one frame), copying its payload. Ignored once the
    connection is closing. *)

val send_string : t -> kind -> string -> unit

val send_shared : t -> kind -> Httpz.Bigstring.t -> off:int -> len:int -> unit
(** As {!send} for a payload that stays unchanged and alive for as long
    as any connection may be sending it (a broadcast): not copied when
    the queue is empty. *)

val flush : t -> (t -> unit) -> unit
(** [flush c k] runs [k c] once everything queued so far left (at once
    when nothing is queued); never if the connection closes first. *)

val buffered : t -> int
(** Bytes queued and not yet written. *)

val ping : t -> unit

val close : t -> code:int -> reason:string -> unit
(** Starts the close handshake ([reason]: at most 123 bytes of UTF-8).
    @raise Invalid_argument for a code {!Httpz.Ws_close.is_valid_code}
    refuses. *)

val is_open : t -> bool
(** Accepted, and no Close sent or received. *)

val id : t -> int
(** The connection's slot number: unique among the worker's open
    connections (a key for the application's tables). *)

val protocol : t -> string
(** The subprotocol chosen by {!accept}, or [""]. *)

val ctx : t -> Ctx.t
(** The connection as a handler context ({!Ctx.client}, {!Ctx.secure}). *)

val of_ctx : Ctx.t -> t option
(** [of_ctx ctx] is the WebSocket of a connection {!accept}ed (from the
    handler that accepted it on), [None] for any other. *)

(** {1 For the switch ({!Connection}): the connection's events} *)

val accepted : Slot.t -> bool
(** The handler {!accept}ed an upgrade on [c]: when its 101 left, [c] is a
    WebSocket's. *)

val start : Slot.t -> Conn_action.t
(** The 101 left: ends the HTTP/1.1 exchange, sets [mode] to [Websocket]
    and reads the frames that came with the request, if any. *)

val going_away : Slot.t -> unit
(** The worker drains (graceful shutdown, reload): a Close 1001, then the
    close handshake as for {!close}. *)

val is_websocket : Slot.t -> bool
val prepare_read : Slot.t -> Conn_action.t
val received : Slot.t -> int -> Conn_action.t
val written : Slot.t -> Conn_action.t
val blocked : Slot.t -> unit
val timeout : Slot.t -> Conn_action.t
val resume : Slot.t -> Conn_action.t
val closed : Slot.t -> unit
(** Reports 1006 to [on_close] (unless reported) and gives the session's
    buffers back; nothing for a connection with no WebSocket session. *)
