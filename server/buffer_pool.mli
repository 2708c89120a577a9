(** Per-worker buffers: taken while a connection has work in progress,
    given back when it has none.

    A worker keeps one pool per kind of buffer (read buffers, write
    buffers, request bodies). Each pool serves buffers of one {e class}
    size from a stack of at most [keep] spare ones, and buffers of any
    larger size as fresh mappings. A connection takes a read buffer when
    bytes arrive, a write buffer when it answers, a body buffer when a
    handler asks for a body that does not fit behind its head, and gives
    each back as soon as it holds nothing that is still needed: an idle
    keep-alive connection holds none, and no request's memory outlives it.

    Buffers are anonymous mappings (mmap), not malloc and not the OCaml
    heap: a buffer the pool does not keep is unmapped at once when given
    back, so its memory returns to the system immediately, even in a loop
    that never triggers a garbage collection (a dropped [Bigarray] would
    wait for the major GC to finalize it).

    {2 Ownership}
    A buffer from {!take} belongs to the caller until it calls {!give};
    after [give] the caller must drop every reference to it: the buffer may
    be unmapped (it then has length 0) or handed to another connection.
    Not thread-safe: one pool per event loop. *)

type t

val create : size:int -> keep:int -> t
(** [create ~size ~keep]: buffers of the class [size] are served from (and
    returned to) a stack of at most [keep] spare ones. Allocates.
    @raise Invalid_argument if [size <= 0] or [keep < 0]. *)

val size : t -> int
(** The class size. *)

val take : t -> Httpz.Bigstring.t
(** [take t] is a buffer of exactly [size t] bytes: a spare one (no
    allocation) or a new mapping (allocates a bigarray header).
    @raise Out_of_memory when the mapping fails. *)

val take_at_least : t -> int -> Httpz.Bigstring.t
(** [take_at_least t n] is [take t] when [n <= size t], else a new mapping
    of [n] bytes rounded up to the page size. *)

val grow : t -> Httpz.Bigstring.t -> keep:int -> int -> Httpz.Bigstring.t
(** [grow t b ~keep n] is a buffer of at least [n] bytes (the class size
    or twice [b]'s length, doubled until it fits) holding the first [keep]
    bytes of [b], which goes back to [t] ({!give}). For a buffer that
    outgrows itself (a queue, a message being reassembled). *)

val give : t -> Httpz.Bigstring.t -> unit
(** [give t b] returns a buffer obtained from this pool: kept as a spare
    when it is of the class size and the stack has room, unmapped
    otherwise. A buffer of length 0 (already unmapped, or the empty
    placeholder) is ignored, so [give t empty] is harmless. *)

val in_use : t -> int
(** Bytes taken and not yet given back. *)

val kept : t -> int
(** Bytes held as spares. *)

val trim : t -> unit
(** [trim t] unmaps every spare buffer. *)
