(** How a response goes out on an HTTP/2 stream: the {!Slot.protocol} of
    an exchange ({!H2_exchange}), and the queueing of its body as DATA on
    the connection's [H2_connection.t].

    {b The head.} {!protocol}'s [begin_head] writes the server's own lines
    (Date, Server, the configured headers) into the exchange's [out], the
    handler's [Ctx.header]s follow as over HTTP/1.1, and [end_head] turns
    those lines (our own, well formed) into one HEADERS: names lower-cased,
    the fields HTTP/2 forbids (Connection, Keep-Alive, Transfer-Encoding,
    Upgrade, Proxy-Connection) dropped, Content-Length added as
    [Ctx] asked. [out] is then empty for the body. [Ctx.upgrade] raises
    [Invalid_argument] (RFC 9113 has no Upgrade).

    {b The body.} A body in [out] or a stable bigstring goes as it is; a
    string or a bigstring the handler may reuse is copied into [out]
    first; a file is queued as an external body whose bytes the
    connection writes after each DATA frame header (sendfile, or pread
    into its buffer over TLS). One piece per stream is queued at a time:
    what a handler flushes ({!queue_piece}) must leave before its
    continuation runs ({!H2_exchange.settle}).

    {b Allocation.} None, except the first time a field name outside
    {!Httpz.Header_name} is met (kept, lower-cased, for the next
    responses) and when a streamed body outgrows [out]. *)

val session : Slot.t -> Slot.h2
(** The exchange's connection state. @raise Invalid_argument on a slot
    that is no HTTP/2 exchange. *)

val protocol : Slot.protocol

val queue_rest : Slot.t -> unit
(** The response is complete: what is left of it is queued, ending the
    stream ([fin_queued]); nothing yet while an earlier piece is pending
    (called again when it left). *)

val queue_piece : Slot.t -> unit
(** [Ctx.flush]: the pieces in [out] are queued; the exchange's [after]
    becomes [Then_resume]. *)
