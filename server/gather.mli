(** Stable pieces of an HTTP/2 connection's output that leave from where
    they are, placed between the frames in the connection's [out] buffer:
    one vectored write then takes the frames and several DATA payloads
    (cached files' bytes) at once, as h2o's [writev] does, instead of one
    system call per payload.

    The pieces are owned by the connection slot ({!Slot.t}'s [gather]);
    only {!Output} consumes them and only the HTTP/2 session adds them. A
    piece's bytes must stay unchanged until it is written (they are stable
    bytes: {!Ctx.body_bigstring_stable}'s promise). Piece [i] goes before
    [out]'s byte [pos t i]; positions never decrease. Nothing here
    allocates but {!create}. *)

type t = {
  bufs : Httpz.Bigstring.t array;
  meta : int array;  (** per piece: its position in [out], offset, length *)
  mutable first : int;  (** the first piece not completely written *)
  mutable count : int;
  mutable bytes : int;  (** bytes of pieces [first ..] still to write *)
}

val capacity : int
(** Pieces per write at most (16). *)

val none : t
(** No room at all: the placeholder of a slot that never gathered. *)

val create : unit -> t

val active : t -> bool
(** Some piece is not completely written. *)

val full : t -> bool

val add : t -> pos:int -> Httpz.Bigstring.t -> off:int -> len:int -> unit
(** Appends a piece ([not (full t)], [len > 0], [pos] at or after the last
    piece's). *)

val pos : t -> int -> int
val off : t -> int -> int
val len : t -> int -> int

val wrote : t -> int -> int -> unit
(** [wrote t i n]: [n] bytes of piece [i] were written. *)

val reset : t -> unit
(** Forgets every piece; the buffers stay referenced until overwritten or
    {!clear}ed (no pointer write per batch). *)

val clear : t -> empty:Httpz.Bigstring.t -> unit
(** Forgets every piece and drops the references to their buffers (the
    connection ended). *)
