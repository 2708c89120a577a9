(** Bigstrings over anonymous memory mappings, given back to the system
    the moment they are unmapped (a [Bigarray] waits for the major GC).
    The buffer pools of httpz.server are made of them. *)

external map : int -> Httpz.Bigstring.t = "httpz_buffer_map"
(** [map n] is a new zero-filled mapping of [n > 0] bytes (mmap), as a
    bigstring whose finalizer frees nothing. Allocates its header on the
    OCaml heap. @raise Out_of_memory when mmap fails.
    @raise Invalid_argument if [n <= 0]. *)

external unmap : Httpz.Bigstring.t -> int = "httpz_buffer_unmap"
(** [unmap b] unmaps a bigstring made by {!map}: [0] or [-errno]. [b] is
    left with length 0 and no data, so a checked access to it fails
    instead of touching freed memory; unchecked ([unsafe_]) accesses must
    not happen: drop every reference first. Idempotent. *)
