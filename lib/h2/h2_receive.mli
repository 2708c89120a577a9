(** The receiving half of {!H2_connection}: the connection preface, then
    frame by frame the RFC 9113 rules of §5.1 (stream states), §6 (each
    frame type), §6.9 (flow control), §8 (request heads, through
    {!H2_head}) and the abuse limits. Documented in {!H2_connection.received}.
    Allocates nothing. *)

val received : H2_conn_state.t -> Bigstring.t -> off:int -> len:int -> now:int -> H2_conn_state.event
