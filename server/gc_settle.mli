(** Ends a major GC marking phase that a worker no longer drives.

    OCaml's major GC advances by slices run as the minor heap fills. A
    worker at its steady state allocates nothing, so a cycle that started
    during its set-up (connections, pools) stays in its marking phase, where
    every [caml_modify] darkens the value it overwrites: about 5 % of an
    HTTP/2 worker's time under load. {!tick}, called once a second, marks
    such a cycle to its end once a whole second passed without allocation;
    the sweep it leaves pending costs [caml_modify] nothing. A worker that
    allocates is left to the GC's own pacing. *)

type t
(** The minor words seen at the last tick. *)

val create : unit -> t

val tick : t -> unit
(** [tick t]: call once a second. When no word was allocated since the last
    tick and the GC is marking, runs major slices until it is not (a few
    milliseconds for a heap of some megabytes, once per such cycle).
    Allocates nothing itself. *)
