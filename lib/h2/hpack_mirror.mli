(** What the peer's HPACK decoder holds of the entries this encoder put in
    its dynamic table, so that a set of prepared response fields
    ({!Prepared_fields}) is inserted there once and then sent as indices.

    A response head of a static file is then about ten bytes instead of
    about two hundred: fewer bytes to copy and encrypt, and a client that
    decodes an index instead of a literal.

    {b The model.} Only sets are inserted (this connection's other fields
    are literals without indexing), so the peer's table holds, newest
    first, what {!block} inserted. The mirror keeps their sizes (RFC 7541
    §4.1) and evicts as the peer does, with a maximum that is never above
    the peer's: the peer's own [SETTINGS_HEADER_TABLE_SIZE] (4096 until it
    says otherwise), lowered, never raised, by {!set_peer_max}, which also
    writes the §6.3 size update at the start of the next block. It also
    forgets entries past the 64 newest: an entry the mirror takes as
    present is always present in the peer's table; the reverse need not
    hold. A set is remembered (by identity and version, eight at a time,
    the least recently sent forgotten first) with the insertion number of its first field: it is sent
    as indices while all its entries are present and the set has not
    changed; otherwise as literals with incremental indexing, inserting
    them again.

    {b Failure.} A block that inserted and was then not sent (the stream
    was reset before its HEADERS were queued) leaves the peer's table
    behind the mirror's: the caller then calls {!disable}, and from then
    on every set goes out as literals without indexing.

    {b Allocation.} {!create} allocates (about 600 bytes); nothing else
    does. *)

type t

val create : unit -> t

val reset : t -> unit
(** As new: for a new connection (the peer's table is empty). *)

val set_peer_max : t -> int -> unit
(** The peer's [SETTINGS_HEADER_TABLE_SIZE]. A value below the current
    maximum lowers it (evicting) and makes the next {!start_block} write
    a dynamic table size update. *)

val start_block : t -> Bigstring.t -> off:int -> int
(** Writes a pending size update at [off] (before any field of the
    block): the offset past it.
    @raise Hpack_encoder.No_space when it does not fit. *)

val block : t -> Bigstring.t -> off:int -> Prepared_fields.t -> int
(** [block t buf ~off p] writes [p]'s fields at [off], as indices when
    the peer holds them, else as literals that insert them (or, disabled
    or too large for the table, literals without indexing): the offset
    past them.
    It may write scratch bytes past the offset it returns (up to eight
    from [off], within [buf]).
    @raise Hpack_encoder.No_space when they do not fit; nothing is
    written and the model is unchanged. *)

val inserted_since_start : t -> bool
(** Whether a {!block} since the last {!start_block} inserted entries. *)

val sent : t -> unit
(** The block is on its way to the peer (queued whole). A block that
    inserted and was not declared sent before the next {!start_block}
    disables the mirror there. *)

val disable : t -> unit
(** No more indexing on this connection. *)

val enabled : t -> bool
