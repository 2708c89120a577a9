(** How a connection's bytes move: plain TCP ({!Plain}) or TLS ({!Tls}),
    chosen per connection by [c.ssl]. The backends call these and never a
    transport directly, so each works with both. *)

val read : Conn.t -> int
val write : Conn.t -> Output.result
val write_now : Conn.t -> unit

val buffered : Conn.t -> bool
(** Received bytes wait in the transport (TLS only): read before waiting
    for the socket. *)

val close_notify : Conn.t -> unit
(** The transport's own goodbye before the write side is shut (TLS:
    close_notify). *)

val release : Conn.t -> unit
(** Frees the transport's state of a connection that is closing or
    leaving the server. *)
