(** The server's messages to the operator: one line on standard error,
    ["httpz: "] first, flushed at once (so lines of several workers do not
    interleave within a line). Allocates: for start-up, errors and exit
    lines, never the request path. *)

val msg : ('a, out_channel, unit) format -> 'a
