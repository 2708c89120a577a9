(** How a response goes out on an HTTP/2 stream: the {!Slot.protocol} of
    an exchange ({!H2_exchange}), and the queueing of its body as DATA on
    the connection's [H2_connection.t].

    {b The head.} The handler's fields ({!protocol}'s field writers,
    which {!Ctx}'s header functions call) are checked as
    {!Httpz.Response}'s writers check them and go into the exchange's
    [out] at once as HPACK: literals without indexing, never
    Huffman-coded, the name a static-table index or the name lower-cased
    (RFC 9113 §8.2.1); the fields HTTP/2 forbids (Connection, Keep-Alive,
    Transfer-Encoding, Upgrade, Proxy-Connection) are checked, then left
    out (§8.2.2). No text is written, and none is read back. Such
    literals depend on no table and change none, so they stay right
    however long the handler waits before ending its head, whatever the
    connection's encoder sent meanwhile. What does touch the peer's
    dynamic table is left to [end_head], which builds the HEADERS in the
    connection's encoder in one go: [:status], then Date and the
    listener's own fields (one prepared set, refilled once a second),
    then [out]'s bytes, except that a prepared set ({!Ctx.fields}) still
    unchanged since it was given goes through the connection's
    {!Httpz.Hpack_mirror} (indices once inserted) rather than as the
    literals copied for it, then Content-Length as [Ctx] asked. [out] is
    then empty for the body. [Ctx.upgrade] raises [Invalid_argument]
    (RFC 9113 has no Upgrade).

    {b The body.} A body in [out] or a stable bigstring goes as it is; a
    string or a bigstring the handler may reuse is copied into [out]
    first; a file is queued as an external body whose bytes the
    connection writes after each DATA frame header (sendfile, or pread
    into its buffer over TLS). One piece per stream is queued at a time:
    what a handler flushes ({!queue_piece}) must leave before its
    continuation runs ({!H2_exchange.settle}).

    {b Allocation.} None, except at a listener's first stream (its own
    fields split into a set), an exchange's first prepared set (room to
    note 8 of them for its life; more are sent as their literals), and
    when a streamed body outgrows [out]. *)

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
