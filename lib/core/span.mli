(** A byte range inside a caller-owned {!Bigstring.t}, as one immediate integer.

    A span is [off lsl 31 lor len] behind a [private int]: it lives in a
    register or an [int array] slot, never in a heap block, so producing one
    costs nothing. Offsets and lengths are below [2{^31}].

    {b Validity.} A span names bytes, not a copy of them. It means what it
    meant only while the caller leaves those bytes of the buffer unchanged:
    for spans produced by {!Request.parse}, until the caller overwrites or
    compacts that region of its read buffer. *)

type t = private int

val make : off:int -> len:int -> t
(** [make ~off ~len] is the span of [len] bytes starting at [off].
    Requires [0 <= off < 2{^31}] and [0 <= len < 2{^31}] (unchecked). *)

val unsafe_of_int : int -> t
(** [unsafe_of_int (s :> int)] is [s]: for code that stores spans in an
    [int array] and reads them back. Any other int is not a span. *)

val empty : t
(** [empty] is the zero-length span at offset 0. *)

val off : t -> int
(** [off s] is the offset of the first byte. *)

val len : t -> int
(** [len s] is the number of bytes. *)

val equal : Bigstring.t -> t -> string -> bool
(** [equal buf s str] is [true] iff the bytes of [s] equal [str] exactly. *)

val equal_caseless : Bigstring.t -> t -> string -> bool
(** [equal_caseless buf s str] compares ignoring ASCII case, as field names,
    transfer codings and connection options require (RFC 9110 §5.1). *)

val parse_decimal : Bigstring.t -> t -> int
(** [parse_decimal buf s] is the value of [s] read as [1*DIGIT], or [-1] when
    [s] is empty, holds anything but ASCII digits (no sign, no blanks, no
    [0x] or [_]), or has more than 18 digits (so the value always fits in
    OCaml's 63-bit [int]). Leading zeros are accepted, as RFC 9110 allows. *)

val to_string : Bigstring.t -> t -> string
(** [to_string buf s] copies the bytes of [s] out into a fresh string.
    {b The one allocating function here}: use it at the edge (logging,
    handing a value to code that wants a [string]), never per request on a
    path meant to be allocation-free. *)

val pp : Bigstring.t -> Format.formatter -> t -> unit
(** [pp buf] prints the bytes of a span. Allocates; for debugging. *)
