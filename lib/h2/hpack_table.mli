(** An HPACK dynamic table (RFC 7541 §2.3.2, §4) in preallocated memory.

    The entries' name and value bytes live back to back in one ring buffer
    of [capacity] bytes (an entry may wrap around its end); per-entry
    offsets, lengths, {!Header_name.t} and pseudo-header kind live in
    [int]/immediate arrays of slots: 8 at first, doubled when an entry
    comes while all are full, up to [capacity / 32 + 1] (every entry costs
    at least its 32 bytes of overhead). A table whose peer adds a few
    entries (the usual client) keeps small arrays; the byte ring never
    grows.

    Indices are dynamic-table indices: [1] is the newest entry, {!length}
    the oldest (the HPACK index minus 61). Accessors taking [i] do not check
    it: callers check [1 <= i <= length t].

    {b Allocation.} {!create} allocates the buffers; {!add} allocates when
    it grows the slot arrays (a new peak of entries in the table's life, at
    most log{_2}([capacity] / 256) times); {!entry} allocates (for tests).
    Nothing else allocates. *)

type t

val entry_overhead : int
(** [32] (§4.1). *)

val create : capacity:int -> t
(** [create ~capacity] is an empty table whose maximum size is, and can
    never exceed, [capacity] bytes (§4.1 size).
    @raise Invalid_argument if [capacity < 0]. *)

val length : t -> int
(** Number of entries. *)

val size : t -> int
(** §4.1 size: sum over entries of name + value + 32. *)

val max_size : t -> int
val capacity : t -> int

val set_max_size : t -> int -> unit
(** [set_max_size t n] sets the maximum size and evicts the oldest entries
    until the size fits (§4.3).
    @raise Invalid_argument unless [0 <= n <= capacity t]. *)

val clear : t -> unit

val add :
  t -> Bigstring.t -> name_off:int -> name_len:int -> value_off:int -> value_len:int ->
  Header_name.t -> Hpack_static.pseudo -> unit
(** [add t b ~name_off ~name_len ~value_off ~value_len n p] inserts the
    entry whose bytes are in [b] (never the table's own ring), evicting as
    §4.4 says; an entry larger than the maximum size empties the table and
    is not added. Ranges unchecked. *)

val name_len : t -> int -> int
val value_len : t -> int -> int
val header_name : t -> int -> Header_name.t
val pseudo : t -> int -> Hpack_static.pseudo

val marks : t -> int -> int
(** [marks t i] is what the table's user recorded on entry [i] with
    {!set_marks}: [0] for an entry no one marked. The table attaches no
    meaning to it; the mark stays with its entry (an entry added in an
    evicted entry's slot starts at [0]). {!Hpack_decoder} reports it, and
    {!H2_head} records there that the entry's name or value passed its
    checks. *)

val set_marks : t -> int -> int -> unit
(** [set_marks t i m] sets entry [i]'s marks to [m]. *)

val copy_name : t -> int -> Bigstring.t -> dst_off:int -> unit
(** [copy_name t i dst ~dst_off] copies entry [i]'s name to [dst]. *)

val copy_value : t -> int -> Bigstring.t -> dst_off:int -> unit

(** {1 By slot} For a caller that reads several facts of one entry (the
    decoder, per field): [slot_of t i] locates entry [i] once. A slot is
    valid until the next {!add}, {!set_max_size} or {!clear}. *)

val slot_of : t -> int -> int
val name_len_at : t -> int -> int
val value_len_at : t -> int -> int
val header_name_at : t -> int -> Header_name.t
val pseudo_at : t -> int -> Hpack_static.pseudo
val marks_at : t -> int -> int

val copy_at : t -> int -> Bigstring.t -> dst_off:int -> len:int -> unit
(** [copy_at t s dst ~dst_off ~len] copies the first [len] bytes of the
    entry in slot [s] to [dst]: its name ([len = name_len_at t s]), or its
    name and its value right after it ([len] their sum); no other [len].
    Unlike {!copy_name}, the range of [dst] is {e not} checked: the
    caller has made sure the bytes fit. *)

val copy_bytes : Bigstring.t -> src_off:int -> Bigstring.t -> dst_off:int -> len:int -> unit
(** [copy_bytes src ~src_off dst ~dst_off ~len] is the copy {!copy_at}
    makes, for bytes of the caller's (the decoder's static entries):
    between distinct buffers, ranges {e unchecked}; up to 32 bytes by
    whole words, with no loop. *)

val find :
  t -> Bigstring.t -> name_off:int -> name_len:int -> value_off:int -> value_len:int -> int
(** [find t b ...] is the index of the newest entry equal to that name and
    value; else minus the index of the newest entry with that name; else
    [0]. A linear scan (a table of 4 KiB holds at most 128 entries). *)

val entry : t -> int -> string * string
(** [entry t i] is entry [i]'s name and value. Allocates; for tests. *)
