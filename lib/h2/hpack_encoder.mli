(** HPACK encoder (RFC 7541 §6): {!Hpack.Encoder}.

    Every writer takes [buf ~off], writes one representation at [off] and
    returns the offset just past it, like {!Response}:
    {[
      let o = Encoder.start_block e buf ~off:0 in
      let o = Encoder.status e buf ~off:o 200 in
      let o = Encoder.field e buf ~off:o Content_type "text/html" in
      let o = Encoder.field_int e buf ~off:o Content_length 1234 in
      (* bytes [0, o) are the header block *)
    ]}

    {b Choices.} A field equal to a static entry ([:status 200], [:method
    GET], [accept-encoding: gzip, deflate]…) is written as that index
    (§6.1). Otherwise the name is the static entry's index when it has one,
    a literal otherwise, and strings are Huffman-coded when that is not longer
    and [huffman] is on (§5.2). Names are written lower case.

    {b Dynamic table} (off by default: [table_size = 0]). With
    [~table_size:n] the encoder keeps its own copy of what it inserted
    (an {!Hpack_table.t} of [n] bytes): a field found there whole is
    written as its index; any other field that fits is written "with
    incremental indexing" and added, naming a dynamic entry when only the
    name matches. That is how RFC 7541 Appendix C's encoders behave, and it
    pays off for response heads that repeat ([server], [content-type], a
    cache-control policy). [n] is the memory reserved; the table starts
    at [min n 4096] bytes, the peer's SETTINGS_HEADER_TABLE_SIZE until it
    says otherwise, and {!set_peer_max_table_size} moves it within [n]. A
    table smaller than the peer's needs no size update, since the newest
    entries, the only ones ever referenced, are the same in both. Without the table every literal
    is "without indexing" and the peer's table is never touched.

    {b All or nothing.} A writer either writes its whole representation or
    raises before writing anything and before changing the table:
    {!No_space} when it does not fit in [\[off, length buf)];
    {!Invalid_field} for a value holding NUL, CR or LF (RFC 9113 §8.2.1), a
    name that is not lower-case [token] (an optional leading [':'] aside),
    [Header_name.Other] given as a name, a negative number, or a status
    outside 100-999.

    {b Allocation.} {!create} allocates; no writer allocates (exceptions
    are constant, raised with [raise_notrace]). *)

exception No_space
exception Invalid_field

type t

val create : ?huffman:bool -> ?table_size:int -> unit -> t
(** [create ()] is an encoder with Huffman coding when shorter ([huffman],
    default [true]) and no dynamic table ([table_size], default [0]).
    @raise Invalid_argument on a negative or huge [table_size]. *)

val table : t -> Hpack_table.t

val set_peer_max_table_size : t -> int -> unit
(** [set_peer_max_table_size t n] follows a new SETTINGS_HEADER_TABLE_SIZE
    from the peer: the table's maximum becomes [min n table_size] (evicting
    as needed) and the next {!start_block} writes that size update (§6.3),
    preceded by the smallest size set since the last block when that was
    smaller (§4.2: at most two updates). *)

val start_block : t -> Bigstring.t -> off:int -> int
(** [start_block t buf ~off] begins a header block: writes a pending
    dynamic table size update, if any. Call it first in every block. *)

val status : t -> Bigstring.t -> off:int -> int -> int
(** [status t buf ~off code] writes [:status]: one byte for 200, 204, 206,
    304, 400, 404 and 500, a literal with the static name otherwise. With
    the dynamic table on, that literal is written with incremental indexing
    like any other field, its value being the code's three digits: a server
    repeats a few codes (201, 301, 302, 503), and each one after the first
    is then a single byte, for 42 bytes of table per distinct code. *)

val field : t -> Bigstring.t -> off:int -> Header_name.t -> string -> int
(** [field t buf ~off name value] writes a known field. *)

val field_int : t -> Bigstring.t -> off:int -> Header_name.t -> int -> int
(** [field_int t buf ~off name n] writes [n] in decimal. *)

val field_checked :
  t -> Bigstring.t -> off:int -> Header_name.t -> Bigstring.t -> voff:int -> vlen:int -> int
(** [field_checked t buf ~off name src ~voff ~vlen]: as {!field_span} for
    a value the caller has already checked to be a field-value (as
    {!Response}'s writers do). Without Huffman and dynamic table, and for
    a [name] whose static entries carry no value, it is a literal without
    indexing written straight out: one copy, no lookup, no second look at
    the bytes. Otherwise it is {!field_span}.
    @raise Invalid_argument when the range is outside [src]. *)

val field_span : t -> Bigstring.t -> off:int -> Header_name.t -> Bigstring.t -> Span.t -> int
(** [field_span t buf ~off name src s] takes the value from span [s] of
    [src] (which must not overlap the bytes written).
    @raise Invalid_argument when [s] is outside [src]. *)

val field_s : t -> Bigstring.t -> off:int -> string -> string -> int
(** [field_s t buf ~off name value] writes any field, pseudo-headers
    included ([":method"], ["x-trace"]); [name] must be lower case. Finds a
    static name by a linear scan of the 61 entries. *)

val field_s_span : t -> Bigstring.t -> off:int -> string -> Bigstring.t -> Span.t -> int
(** [field_s_span t buf ~off name src s]: {!field_s} with the value taken
    from span [s] of [src] (a field whose name {!Header_name} does not
    know, its value in a buffer). Does not allocate.
    @raise Invalid_argument when [s] is outside [src]. *)

val field_sensitive : t -> Bigstring.t -> off:int -> string -> string -> int
(** As {!field_s}, as "never indexed" (§6.2.3, §7.1.3): for values such as
    short secrets that an intermediary must not index either. *)

type representation = With_indexing | Without_indexing | Never_indexed

val literal : t -> Bigstring.t -> off:int -> representation -> string -> string -> int
(** [literal t buf ~off rep name value] writes exactly that §6.2
    representation (static name index if the name has one, else a literal
    name), never an index. [With_indexing] adds the field to the table
    when it fits (and empties it when not, as the peer will). *)

val indexed : Bigstring.t -> off:int -> int -> int
(** [indexed buf ~off i] writes the §6.1 representation of index [i >= 1];
    the caller vouches for the index.
    @raise Invalid_argument when [i < 1]. *)

val encode_integer : Bigstring.t -> off:int -> prefix:int -> first:int -> int -> int
(** [encode_integer buf ~off ~prefix ~first v] writes [v >= 0] as a §5.1
    integer with a [prefix]-bit prefix, OR-ing [first] (the representation's
    pattern bits, which must be zero within the prefix) into the first
    byte. @raise Invalid_argument on a bad [prefix], [first] or [v]. *)

val integer_length : int -> prefix:int -> int
(** Bytes {!encode_integer} writes. *)
