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

external map_shared : int -> Httpz.Bigstring.t = "httpz_buffer_map_shared"
(** [map_shared n] is a new zero-filled mapping of [n > 0] bytes shared
    with the processes this one forks afterwards (MAP_SHARED): what one
    writes, the others read. Never unmapped (made once, for the process's
    life). @raise Out_of_memory when mmap fails. *)

external cas64 :
  Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_buffer_cas64_byte" "httpz_buffer_cas64"
  [@@noalloc]
(** [cas64 b off expected desired] atomically replaces the 64-bit word at
    [off] (8-aligned) by [desired] if it holds [expected]: [1] when it
    did, [0] when not (or [off] is out of range or unaligned). *)
