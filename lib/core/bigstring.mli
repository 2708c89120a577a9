(** Byte buffers outside the OCaml heap.

    Every httpz buffer is a [Bigstring.t]: a one-dimensional [char] bigarray
    in C layout. The GC never moves or scans its contents, so the server can
    hand it to [read(2)]/[write(2)] directly and the parser can keep integer
    offsets into it.

    {b Ownership.} httpz never keeps a reference to a buffer it is given:
    the caller owns every bigstring and decides when its bytes may change.
    Offsets into a buffer ({!Span.t}) stay meaningful only as long as the
    caller leaves those bytes alone. *)

type t = (char, Bigarray.int8_unsigned_elt, Bigarray.c_layout) Bigarray.Array1.t

val create : int -> t
(** [create n] is a fresh buffer of [n] bytes with unspecified contents.
    Allocates (outside the minor heap); call it once per connection, not per
    request. *)

val length : t -> int
(** [length b] is the size of [b] in bytes. Does not allocate. *)

external unsafe_get : t -> int -> char = "%caml_ba_unsafe_ref_1"
(** [unsafe_get b i] is byte [i] of [b], unchecked. Compiles to one load. *)

external unsafe_set : t -> int -> char -> unit = "%caml_ba_unsafe_set_1"
(** [unsafe_set b i c] stores [c] at [i], unchecked. *)

external unsafe_get64 : t -> int -> int64 = "%caml_bigstring_get64u"
(** [unsafe_get64 b i] reads 8 bytes at [i] (native byte order, unaligned,
    unchecked). The [int64] stays unboxed when consumed in the same function,
    which is what makes word-at-a-time scanning allocation-free. *)

external unsafe_set64 : t -> int -> int64 -> unit = "%caml_bigstring_set64u"
(** [unsafe_set64 b i x] writes 8 bytes at [i], unchecked. *)

val of_string : string -> t
(** [of_string s] is a new buffer holding a copy of [s]. Allocates. *)

val sub_string : t -> off:int -> len:int -> string
(** [sub_string b ~off ~len] copies [len] bytes from [off] into a new string.
    Allocates: the one way bytes leave a buffer as an OCaml string.
    @raise Invalid_argument when the range is outside [b]. *)

val to_string : t -> string
(** [to_string b] is [sub_string b ~off:0 ~len:(length b)]. Allocates. *)

val blit_from_string : string -> src_off:int -> t -> dst_off:int -> len:int -> unit
(** [blit_from_string s ~src_off b ~dst_off ~len] copies [len] bytes of [s]
    into [b]. Does not allocate; copies a word at a time.
    @raise Invalid_argument when either range is out of bounds. *)

val unsafe_blit_from_string : string -> src_off:int -> t -> dst_off:int -> len:int -> unit
(** As {!blit_from_string} without the bounds checks: for callers that have
    already checked the space, on the hot path. *)

val blit : src:t -> src_off:int -> dst:t -> dst_off:int -> len:int -> unit
(** [blit ~src ~src_off ~dst ~dst_off ~len] copies [len] bytes; the ranges may
    overlap. Does not allocate.
    @raise Invalid_argument when either range is out of bounds. *)

val check_range : string -> t -> off:int -> len:int -> unit
(** [check_range fn b ~off ~len] returns when [off .. off + len) lies inside
    [b] and raises [Invalid_argument fn] otherwise. Public entry points that
    take a span of a caller's buffer call it once, so the unchecked loads
    behind them can never leave the buffer. Allocates only when it raises. *)

val index_from : t -> off:int -> stop:int -> char -> int
(** [index_from b ~off ~stop c] is the first index [i] in [\[off, stop)] with
    [b.{i} = c], or [-1]. Does not allocate. *)

val equal_string : t -> off:int -> len:int -> string -> bool
(** [equal_string b ~off ~len s] is [true] iff the [len] bytes at [off] equal
    [s] (so [len = String.length s]). Does not allocate. *)

val equal_caseless : t -> off:int -> len:int -> string -> bool
(** As {!equal_string}, ignoring ASCII case on both sides. Does not allocate. *)
