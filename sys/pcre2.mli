(** Regular expressions through PCRE2 (the engine nginx's [location ~]
    uses), JIT-compiled where the machine allows it.

    {!compile} allocates and runs at start-up or on a reload; {!exec} and
    {!group} allocate nothing. A compiled pattern carries its own match
    state: use it from one thread at a time (a worker's loop), and read a
    match's groups before the next {!exec} of the same pattern. Patterns
    work on bytes (no UTF-8 mode): [.] is one byte. *)

type t

val compile : ?caseless:bool -> string -> (t, string) result
(** [compile ?caseless pattern]: [Error "message at offset N"] for a
    pattern PCRE2 refuses. [caseless] (default [false]): ASCII letters
    match either case, as nginx's [~*]. *)

val captures : t -> int
(** The number of capturing groups of the pattern. *)

val jit : t -> bool
(** Whether the pattern was JIT-compiled. *)

type groups = int array
(** Where {!exec} puts a match: pairs of start and end offsets, the whole
    match first, then each group; [-1, -1] for a group that took no part.
    Make one with {!groups} and reuse it. *)

val groups : t -> groups
(** [groups t] is room for every group of [t]'s matches. *)

val exec : t -> Httpz.Bigstring.t -> off:int -> len:int -> groups -> bool
(** [exec t buf ~off ~len g]: [t] matches somewhere in
    [buf.{off .. off + len - 1}], with offsets relative to [off] in [g]. A
    pattern that exceeds PCRE2's match limit counts as no match. *)

