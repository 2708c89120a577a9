(** Per-worker memory for request bodies.

    A request whose body does not fit behind its head in the connection's
    read buffer gets a buffer from this pool for exactly as long as the
    request lasts: the loop {!give}s it back when the response has been
    handed to the socket (or the connection dies), so no connection keeps
    body memory between requests and an idle worker holds at most
    [keep * small] bytes of it, however large the bodies it has received.

    Buffers are anonymous mappings (not malloc, not the OCaml heap): a
    buffer above the [small] class, or one the pool has no room to keep, is
    unmapped at once when given back, so the memory returns to the system
    immediately, even in a loop that never triggers a garbage collection.

    {2 Ownership}
    A buffer from {!take} belongs to the caller until it calls {!give};
    after [give] the caller must drop every reference to it: the buffer may
    be unmapped (it then has length 0) or handed to another request. *)

type t

val create : small:int -> keep:int -> t
(** [create ~small ~keep]: buffers of at most [small] bytes are served from
    (and returned to) a stack of at most [keep] buffers of exactly [small]
    bytes. Allocates. @raise Invalid_argument if [small <= 0] or
    [keep < 0]. *)

val small : t -> int

val take : t -> int -> Httpz.Bigstring.t
(** [take t n] is a buffer of at least [n > 0] bytes: a kept [small] one
    when [n <= small] (no allocation when the stack is not empty), else a
    new mapping of [n] bytes rounded up to the page size (allocates a
    bigarray header). @raise Out_of_memory when the mapping fails. *)

val give : t -> Httpz.Bigstring.t -> unit
(** [give t b] returns a buffer obtained from {!take}: kept for reuse when
    it is of the [small] class and the stack has room, unmapped otherwise.
    Giving a buffer of length 0 (already unmapped) does nothing. *)

val in_use : t -> int
(** Bytes taken and not yet given back. *)

val kept : t -> int
(** Bytes held in the stack for reuse. *)
