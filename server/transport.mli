(** How a connection's bytes move: plain TCP ({!Plain}) or TLS ({!Tls}),
    chosen per connection by [c.ssl]. The backends call these and never a
    transport directly, so each works with both. *)

val read : Slot.t -> int
val write : Slot.t -> Output.result

val push : Slot.t -> unit
(** Makes the kernel send at once what a write gave it with [MSG_MORE]
    ({!Conn_action.Push}). *)

val buffered : Slot.t -> bool
(** Received bytes wait in the transport (TLS only): read before waiting
    for the socket. *)

val close_notify : Slot.t -> unit
(** The transport's own goodbye before the write side is shut (TLS:
    close_notify). *)

val release : Slot.t -> unit
(** Frees the transport's state of a connection that is closing or
    leaving the server. *)
