(** Raw deflate streams (RFC 1951, no zlib header) over zlib, for
    WebSocket permessage-deflate (RFC 7692): thin stubs in
    [zlib_stubs.c], one zlib call each.

    Why not camlzip ([libzip-ocaml-dev], the [zip] library)? Its
    [Zlib.deflate_init] fixes the window at 2^15 (RFC 7692's
    [server_max_window_bits] asks for less), and it reads and writes
    [bytes], not bigstrings, so every message would be copied twice more.

    A stream is an immediate int holding the C pointer; [0] is none. It
    belongs to one connection and is freed with {!free}: the GC does not
    know it. {!step} allocates nothing. *)

type t = private int

val none : t

val deflater : wbits:int -> level:int -> t
(** A compressor with a 2^[wbits] window (9-15; zlib cannot compress raw
    deflate with 8) at [level] (0-9; 0: stored blocks, no back-references).
    {!none} when zlib refuses (memory). Allocates C memory (~256 KiB at 15
    bits). *)

val inflater : wbits:int -> t
(** A decompressor accepting windows up to 2^[wbits] (8-15). *)

val free : t -> unit
(** Frees the stream; [free none] does nothing. *)

val reset : t -> unit
(** Forgets the stream's history (a new context). *)

val no_flush : int
val sync_flush : int
(** Flush modes: [sync_flush] ends the output on a byte boundary with the
    empty stored block [00 00 ff ff] (RFC 7692 §7.2.1). *)

type status = Ok | Stream_end | No_progress | Error

val step :
  t -> Httpz.Bigstring.t -> off:int -> len:int -> Httpz.Bigstring.t -> dst_off:int -> dst_len:int ->
  flush:int -> int
(** [step z src ~off ~len dst ~dst_off ~dst_len ~flush] runs deflate (or
    inflate) once and is a packed result read with {!status}, {!used} and
    {!written}. Lengths must be under 2^29. Unchecked ranges. *)

val status : int -> status
val used : int -> int
(** Bytes of [src] consumed. *)

val written : int -> int
(** Bytes written to [dst]. *)
