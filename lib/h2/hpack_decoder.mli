(** HPACK header block decoder (RFC 7541 §3, §4, §6): {!Hpack.Decoder}.

    {b Shape.} A {!t} is created once per connection; it owns the dynamic
    table (a preallocated ring, {!Hpack_table}) and the limits. A header
    block (HEADERS plus its CONTINUATION fragments, concatenated by the
    HTTP/2 layer: a representation may straddle fragments) is walked one
    field at a time:
    {[
      Decoder.start_block d ~off ~len;
      let rec loop () =
        match Decoder.next_field d src ~out with
        | Field ->
            (* name and value are spans of [out] *)
            use (Decoder.header_name d) (Decoder.pseudo d)
              (Decoder.name d) (Decoder.value d);
            loop ()
        | End -> (* the block is done *)
        | Error -> (* COMPRESSION_ERROR: Decoder.error d *)
      in
      loop ()
    ]}
    Dynamic table size updates (§6.3) are applied inside {!next_field} and
    never returned.

    {b Ownership.} [src] and [out] belong to the caller and must be the same
    buffers for every {!next_field} call of a block. Every field's name and
    value are copied into [out] (literal bytes, Huffman-decoded bytes and
    table entries alike), one after the other from offset 0, so the spans
    of {e all} fields of a block stay valid until the next {!start_block}
    or until the caller changes [out]. The decoder keeps no reference to
    either buffer. [out] of [max_header_list_size] bytes is always enough
    ({!Output_full} is then impossible: fields cost 32 bytes more than
    their bytes).

    {b Limits.} Each field adds name + value + 32 to the header list size
    (RFC 9113 §6.5.2 SETTINGS_MAX_HEADER_LIST_SIZE); the check comes before
    any byte of the field is copied, so a small block that references a
    large table entry many times (an HPACK bomb) stops with
    {!Header_list_too_large} after [max_header_list_size] bytes of work. A
    string literal's encoded length above [max_string_length] is
    {!String_too_long}; integers are bounded by 2{^28} - 1.

    {b Errors.} Every error is a COMPRESSION_ERROR (RFC 9113 §4.3): the
    dynamic table is now out of step with the peer's encoder, so the
    connection must end. The decoder stays failed: {!next_field} keeps
    returning [Error]. Checking what HTTP/2 forbids in the decoded fields
    (upper-case names, pseudo-header order, connection-specific fields) is
    the HTTP/2 layer's job: {!header_name} matches names in any case.

    {b Allocation.} {!create} allocates the state, the ring and its arrays
    once. Nothing else allocates, except {!Hpack_table.entry} and
    [Invalid_argument] raised on a caller's range error. *)

type error =
  | Truncated  (** the block ends inside a representation *)
  | Integer_overflow  (** an integer above 2{^28} - 1, or with more than 4 continuation bytes *)
  | Bad_index  (** index 0, or beyond the static and dynamic tables *)
  | Huffman_eos  (** a Huffman string holds EOS *)
  | Huffman_padding  (** Huffman padding longer than 7 bits or not all ones *)
  | String_too_long  (** a string literal longer than [max_string_length] *)
  | Header_list_too_large  (** the fields add up to more than [max_header_list_size] *)
  | Table_size_too_large  (** a size update above [max_table_size] *)
  | Table_size_update_late  (** a size update after the block's first field *)
  | Output_full  (** [out] is too small for the decoded fields *)

val error_to_string : error -> string
(** A stable snake_case name. Does not allocate. *)

val describe : error -> string
(** One sentence saying what was wrong. Does not allocate. *)

type status = Field | End | Error

val max_integer : int
(** [2{^28} - 1]: the largest integer (§5.1) decoded or encoded. *)

val decode_integer : Bigstring.t -> off:int -> stop:int -> prefix:int -> int
(** [decode_integer b ~off ~stop ~prefix] reads a §5.1 integer with an
    N-bit prefix ([1 <= prefix <= 8]) starting at [off], reading nothing at
    or past [stop]. Ignores the bits above the prefix. Result: [value lsl 3
    lor bytes_used] ([>= 0]), or [-1] when [stop] comes first, [-2] when the
    value exceeds {!max_integer}. Unchecked range; does not allocate. *)

type t

val default_max_table_size : int
(** [4096], SETTINGS_HEADER_TABLE_SIZE's initial value. *)

val default_max_header_list_size : int
(** [32768], as {!Request.default_limits}'s [max_head]. *)

val default_max_string_length : int
(** [16384]. *)

val create :
  ?max_table_size:int -> ?max_header_list_size:int -> ?max_string_length:int -> unit -> t
(** [create ()] is a decoder whose dynamic table starts empty with maximum
    size [max_table_size]: the SETTINGS_HEADER_TABLE_SIZE this endpoint
    advertises (and must not change later: the ring is sized by it).
    @raise Invalid_argument on a negative limit or a table size above
    {!max_integer}. *)

val start_block : t -> off:int -> len:int -> unit
(** [start_block t ~off ~len] begins a header block held in
    [src.{off .. off+len-1}], forgets the previous block's fields and
    header list size, and empties [out] (it will be written from 0). *)

val reset : t -> unit
(** [reset t] makes [t] as {!create} left it (empty table, not failed), so
    a pool can hand the state to a new connection. *)

val next_field : t -> Bigstring.t -> out:Bigstring.t -> status
(** [next_field t src ~out] decodes the next field of the block. [End] when
    the block is used up (and again on later calls); [Error] on invalid
    input or a limit (see {!error}).
    @raise Invalid_argument when the block's range is outside [src]. *)

val next_field_unchecked : t -> Bigstring.t -> out:Bigstring.t -> status
(** [next_field_unchecked t src ~out] is {!next_field} without the check
    of the block's remaining range against [src]: for the calls after the
    first of a block, with the same [src] (that range only shrinks, so the
    first call's check covers them). *)

(** {1 The current field} Meaningful after [Field]. *)

val name : t -> Span.t
(** The name, in [out]. *)

val value : t -> Span.t
(** The value, in [out]. *)

val header_name : t -> Header_name.t
(** The known name ([Other] for unknown names and pseudo-headers): from a
    precomputed map for static entries, computed once when an entry enters
    the dynamic table, or matched (any case) for literal names. *)

val pseudo : t -> Hpack_static.pseudo
(** Which pseudo-header the name is, or [Regular]. *)

val static_name : t -> bool
(** The name is a static table entry's (indexed, or the name of a literal
    field): a lower-case token, or a pseudo-header's, that a caller need
    not check again. *)

val static_value : t -> bool
(** The whole field is a static table entry (§6.1): its value too is one
    of RFC 7541 Appendix A's. *)

(** {1 Marks on dynamic table entries}

    A caller that checks each field (as {!H2_head} does) may record on the
    entry a field was inserted as that its name and value passed, and learn
    it back when a later field references the entry, so as to check it only
    once. Marks are the caller's small integers ([0 .. 255]); bit
    {!name_mark} speaks of the entry's name, the others of its value.
    The decoder gives them no meaning; a new entry starts unmarked ([0]),
    also when it reuses an evicted entry's slot. *)

val name_mark : int
(** [1]: the mark bit that a field referencing only the entry's name
    (a literal with an indexed name) inherits. *)

val entry_marks : t -> int
(** The marks of the dynamic table entry the current field came from: all
    of them for a field indexed from the dynamic table (§6.1), only
    {!name_mark} for a literal whose name is indexed from it, [0] for any
    other field. *)

val inserted : t -> bool
(** The current field was a literal with incremental indexing (§6.2.1) and
    is now the dynamic table's entry 1 (an entry larger than the table's
    maximum size is not inserted, §4.4). *)

val mark_inserted : t -> int -> unit
(** [mark_inserted t m] records marks [m] (lower 8 bits) on the entry the
    current field was inserted as; does nothing when it was not
    {!inserted}. Call it before the next {!next_field}. *)

val never_indexed : t -> bool
(** The field came as "never indexed" (§6.2.3): an intermediary must
    forward it so. *)

(** {1 Progress and state} *)

val error : t -> error
val failed : t -> bool

val error_offset : t -> int
(** Offset in [src] of the representation that failed (or last read). *)

val position : t -> int
(** Offset in [src] of the next representation. *)

val field_count : t -> int
(** Fields of this block so far. *)

val header_list_size : t -> int
(** Sum of name + value + 32 over this block's fields so far. *)

val output_length : t -> int
(** Bytes of [out] used so far in this block. *)

val max_table_size : t -> int
(** The advertised SETTINGS_HEADER_TABLE_SIZE given to {!create}. *)

val table : t -> Hpack_table.t
(** The dynamic table, for inspection. *)
