(** The parse states of a worker's requests in progress — a head parser
    ({!Httpz.Request.t}, most of a connection's size with its header
    tables) and a chunk decoder — by index.

    A connection takes an index with its read buffer and gives it back with
    it, so an idle connection holds none (it keeps index [0], whose states
    are placeholders never parsed into). Indices, not the states
    themselves, move between the connections and the free list: the
    connection record stores an immediate integer, and taking and giving
    back write no pointer (no write barrier per request).

    States are created on demand and kept for reuse up to [keep] spare
    ones; beyond that a given-back index's states are dropped (left to the
    GC) and the index reused later, so a burst of requests in progress
    (10,000 slow heads) does not pin their memory after it. Not
    thread-safe: one per event loop. *)

type t

val create : limits:Httpz.Request.limits -> keep:int -> t

val none : int
(** [0]: the index of a connection that holds no parse state. *)

val take : t -> int
(** An index whose head parser is reset (allocates only when no spare
    state is left). *)

val give : t -> int -> unit
(** [give t i] resets the parser (a partial head must not be continued by
    another connection's bytes) and makes [i] free again. [give t none]
    does nothing. *)

val request : t -> int -> Httpz.Request.t
val chunked : t -> int -> Httpz.Chunked.t

val spare : t -> int
(** Spare states kept. *)
