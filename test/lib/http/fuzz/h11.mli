(** Python's h11 as an oracle: a long-lived [python3] subprocess running
    [h11_oracle.py] (embedded in the executable).

    Inputs are sent length-prefixed on the child's stdin and answered with
    one JSON line each. {!batch} pipelines many inputs per round trip; it
    keeps the bytes in flight small enough that neither side can block on a
    full pipe while the other waits. *)

type t

val start : unit -> (t, string) result
(** [start ()] launches the oracle with the first interpreter that can
    [import h11]: [$HTTPZ_PYTHON], then [/usr/bin/python3] (Debian's, where
    [python3-h11] installs), then [python3] on [PATH]. [Error msg] says
    what is missing. *)

val batch : t -> string array -> Impl.result array
(** [batch t inputs] is h11's verdict on each input, in order.
    @raise Failure if the child dies or answers something unreadable. *)

val check : t -> string -> Impl.result
(** [check t s] is [(batch t [|s|]).(0)]. *)

val stop : t -> unit
