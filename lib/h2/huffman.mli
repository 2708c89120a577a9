(** The HPACK Huffman code (RFC 7541 §5.2 and Appendix B).

    Only the 257 (code, length) pairs of Appendix B are written out; the
    decoder's tables are derived from them when the module is initialised:
    a 16 KiB table indexed by the next 12 bits of the string gives the one
    or two codes that start them (two when both fit: the 5- and 6-bit codes
    of lowercase letters, digits and [/.-] usually do), so a typical string
    decodes two bytes per step; a code longer than 12 bits (11 rarer
    printable characters such as [@] and [~], control and non-ASCII bytes)
    continues through the code tree a bit at a time. The string is read a
    word at a time, never outside its buffer: the 8 bytes loaded lie within
    [Bigstring.length src] (they may extend past [off + len] or start
    before [off], without changing the result).

    {b Strictness (§5.2).} {!decode} refuses a string holding EOS
    ({!error_eos}), and padding that is longer than seven bits or not all
    ones ({!error_padding}): after its last code a string may hold at most
    seven bits, all ones.

    {b Ownership.} Every function reads its source and writes its
    destination as given and keeps no reference; ranges are {e not}
    checked (callers check them once): keep them inside the buffers.

    {b Allocation.} No function here allocates. *)

val decode :
  Bigstring.t -> off:int -> len:int -> Bigstring.t -> dst_off:int -> dst_stop:int -> int
(** [decode src ~off ~len dst ~dst_off ~dst_stop] decodes the [len] bytes at
    [off] into [dst] from [dst_off], writing nothing at or past [dst_stop].
    It is the number of bytes written ([>= 0]), or a negative error:
    {!error_eos}, {!error_padding}, or {!error_no_space} when the decoded
    string does not fit before [dst_stop] (bytes before it may have been
    written). A string decodes to at most [len * 8 / 5] bytes. *)

val error_eos : int
(** [-1]: the string holds the EOS symbol. *)

val error_padding : int
(** [-2]: the last bits are not a valid padding (eight or more bits, or
    bits other than ones). *)

val error_no_space : int
(** [-3]: the output reached [dst_stop]. *)

val encoded_length : Bigstring.t -> off:int -> len:int -> int
(** [encoded_length src ~off ~len] is the number of bytes {!encode} writes
    for those bytes, padding included. *)

val encoded_length_string : string -> off:int -> len:int -> int

val encode : Bigstring.t -> off:int -> len:int -> Bigstring.t -> dst_off:int -> int
(** [encode src ~off ~len dst ~dst_off] writes the code of the [len] bytes
    at [off], padded with ones to a byte boundary, and is the offset just
    past it. The caller has checked that
    [encoded_length src ~off ~len] bytes fit at [dst_off]. *)

val encode_string : string -> off:int -> len:int -> Bigstring.t -> dst_off:int -> int
(** As {!encode}, from a string. *)

val code : int -> int
(** [code sym] is the code of symbol [sym] ([0 .. 256], 256 being EOS),
    right-aligned. Unchecked. *)

val length : int -> int
(** [length sym] is its length in bits (5 to 30). Unchecked. *)
