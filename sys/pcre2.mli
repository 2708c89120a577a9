(** Regular expressions through PCRE2 (the engine nginx's [location ~]
    uses), JIT-compiled where the machine allows it.

    {!compile} allocates and runs at start-up or on a reload; {!run} and
    {!exec} allocate nothing. A match may do a bounded amount of work
    (100,000 steps of PCRE2's match limit, depth 10,000, 1 MiB of heap, a
    JIT stack of at most 512 KiB): past it, {!run} reports an error, so a
    pattern that backtracks badly on a hostile subject costs a bounded
    time and never passes for "no match". Where the JIT cannot run
    (systemd's [MemoryDenyWriteExecute=yes]) PCRE2's interpreter does,
    under the same bounds. A compiled pattern carries its own match
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

val run : t -> Httpz.Bigstring.t -> off:int -> len:int -> groups -> int
(** [run t buf ~off ~len g]: [1] when [t] matches somewhere in
    [buf.{off .. off + len - 1}] (offsets relative to [off] in [g]), [0]
    when it does not, [-1] when PCRE2 gave up (a limit above, or [g] made
    for another pattern): decide that case as an error, not a miss.
    @raise Invalid_argument when the range is outside [buf]. *)

val exec : t -> Httpz.Bigstring.t -> off:int -> len:int -> groups -> bool
(** [exec t buf ~off ~len g] is [run … = 1]: an error counts as no
    match, for callers to which a miss is the safe side. *)

