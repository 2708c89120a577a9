(** The plain-TCP transport: moves a connection's bytes between its socket
    and the state machine's buffers with one system call each.

    Output is {!Output}'s walk over the pending output: head and a string
    or bigstring body in one [sendmsg], a file body with [sendfile] after
    its head; the last output before a close goes out with [MSG_MORE],
    released with the FIN by the close ([Slot.t.held]). A file that ends
    before its Content-Length makes the write [Dead]. *)

val write : Slot.t -> Output.result
(** [write c] writes [c]'s pending output until it is all out, the socket
    is full, or 1 MiB left in this call (so one connection reading fast on
    loopback does not starve the others). *)

val read : Slot.t -> int
(** [read c] reads into [c.in_buf] at [c.in_off], at most [c.in_len]
    bytes: the count, [0] at the end of the stream, or [-errno]. *)
