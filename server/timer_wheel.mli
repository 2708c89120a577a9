(** A hashed timer wheel over small integer ids (connection slots).

    Time is counted in {e ticks} (the event loop uses 100 ms). Each id has at
    most one pending deadline. The wheel is an array of buckets; bucket
    [d land (size - 1)] holds the ids whose deadline tick is [d], chained in
    an intrusive doubly-linked list kept in [int array]s indexed by id, so:
    - {!set} and {!cancel} are O(1) and allocate nothing;
    - {!pop_expired} is O(1) per expired id plus one step per tick elapsed,
      plus one step per id parked in a visited bucket for a later turn of
      the wheel (none when every timeout is shorter than [size] ticks).

    {e Invariant:} an id is in at most one bucket; [deadline t id = -1] iff
    it is in none. Not thread-safe (one wheel per event loop). *)

type t

val create : ids:int -> size:int -> now:int -> t
(** [create ~ids ~size ~now] is an empty wheel for ids [0 .. ids - 1] with
    [size] buckets (rounded up to a power of two), whose clock starts at tick
    [now]. Allocates (once).
    @raise Invalid_argument if [ids < 0] or [size < 1]. *)

val set : t -> int -> int -> unit
(** [set t id d] schedules [id] to expire at tick [d], replacing its
    previous deadline if any. A deadline already behind the wheel's clock
    (the first tick not yet swept) is moved up to that tick, so it expires
    at the first {!pop_expired} whose [now] reaches it. Does not
    allocate. *)

val cancel : t -> int -> unit
(** [cancel t id] removes [id]'s deadline; no effect if it has none. *)

val deadline : t -> int -> int
(** [deadline t id] is the tick at which [id] expires, or [-1]. *)

val count : t -> int
(** [count t] is the number of ids with a deadline. *)

val pop_expired : t -> now:int -> int
(** [pop_expired t ~now] removes and returns one id whose deadline is
    [<= now], or [-1] when there is none left; the wheel's clock then
    stands at [now]. Call it until it answers [-1]. [now] must not go
    backwards (a smaller [now] is treated as the current clock). Does not
    allocate. *)
