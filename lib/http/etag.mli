(** Entity tags and the [If-Match] / [If-None-Match] / [If-Range]
    preconditions ({{:https://www.rfc-editor.org/rfc/rfc9110#section-8.8.3}
    RFC 9110 §8.8.3}, {{:https://www.rfc-editor.org/rfc/rfc9110#section-13.1.1}
    §13.1.1}, {{:https://www.rfc-editor.org/rfc/rfc9110#section-13.1.2}
    §13.1.2}, {{:https://www.rfc-editor.org/rfc/rfc9110#section-13.1.5}
    §13.1.5}).

    {b Grammar} (§8.8.3, §13.1.1, §13.1.2):
{v
  entity-tag    = [ weak ] opaque-tag
  weak          = %s"W/"                      ; case-sensitive
  opaque-tag    = DQUOTE *etagc DQUOTE
  etagc         = %x21 / %x23-7E / obs-text   ; obs-text = %x80-FF
  If-Match      = "*" / #entity-tag
  If-None-Match = "*" / #entity-tag
  If-Range      = entity-tag / HTTP-date
v}
    An opaque-tag may contain [","], so lists are split by walking
    entity-tags, never by searching for commas.

    {b Comparison} (§8.8.3.2). Two entity-tags match {e strongly} when
    neither is weak and their opaque-tags are identical byte for byte; they
    match {e weakly} when their opaque-tags are identical, weak or not:
{v
  ETag 1   ETag 2   strong     weak
  W/"1"    W/"1"    no match   match
  W/"1"    W/"2"    no match   no match
  W/"1"    "1"      no match   match
  "1"      "1"      match      match
v}

    {b The server's own tag} is passed as a [string] holding a complete
    entity-tag, quotes included (["\"5f3a-1b2c\""], or [W/"..."] for a
    weak one), as {!to_string} makes it and as it is sent in [ETag]. The
    empty string means "the representation exists but has no entity-tag":
    ["*"] matches it, no listed tag does. A string that is not an
    entity-tag is treated like [""].

    {b Ownership.} Nothing here keeps a reference to a buffer or string.
    {b Allocation.} Only {!to_string} allocates; every other function
    allocates nothing (tested: 0.0 minor words per call) and never raises
    on wire data. *)

(** {1 Single entity-tags} *)

type kind =
  | Strong  (** the opaque-tag is all the bytes *)
  | Weak  (** [W/] and then the opaque-tag, which starts 2 bytes in *)
  | Not_entity_tag

val parse : Bigstring.t -> off:int -> len:int -> kind
(** [parse buf ~off ~len] is the kind of the [len] bytes at [off] when they
    are exactly one entity-tag (no surrounding whitespace), else
    [Not_entity_tag]. The opaque-tag, quotes included, is the bytes
    [\[off, off + len)] for [Strong] and [\[off + 2, off + len)] for
    [Weak]. *)

val scan : Bigstring.t -> off:int -> stop:int -> int
(** [scan buf ~off ~stop] is the offset just past the entity-tag that
    starts at [off] and ends at or before [stop], or [-1] if the bytes at
    [off] do not start one. A lexer step for lists; reads nothing at or
    beyond [stop]. *)

val is_weak : string -> bool
(** [is_weak tag] is [true] iff [tag] starts with [W/]. *)

val strong_equal : string -> string -> bool
(** [strong_equal a b] is the strong comparison of two entity-tags: both
    valid, neither weak, same opaque-tag. *)

val weak_equal : string -> string -> bool
(** [weak_equal a b] is the weak comparison: both valid, same opaque-tag. *)

(** {1 Preconditions} *)

type condition =
  | Match  (** ["*"], or some listed tag matches [etag] *)
  | No_match  (** a well-formed list (possibly empty) with no matching tag *)
  | Invalid
      (** anything else: an element that is not an entity-tag, ["*"]
          mixed with tags, a missing comma. The whole value is rejected,
          even when a valid element before the fault matches, so that the
          answer does not depend on element order. *)

val if_none_match : Bigstring.t -> off:int -> len:int -> etag:string -> condition
(** [if_none_match buf ~off ~len ~etag] evaluates the [If-None-Match] field
    value at [\[off, off + len)] against the selected representation's tag
    [etag], with the {e weak} comparison (§13.1.2: a cache validating a
    weak tag it holds must get its [304]). Call it only when the target
    has a current representation (without one, ["*"] is false and the
    request proceeds).

    For the server (§13.1.2, §13.2.2 step 3): [Match] means the condition
    is {e false}: [304 Not Modified] for GET and HEAD, [412] for other
    methods. [No_match] and [Invalid] mean it is {e true}: proceed. The RFC
    leaves no third case: "If the field value is a list of entity tags, the
    condition is false if one of the listed tags matches ...  Otherwise,
    the condition is true", so a malformed value degrades to an
    unconditional request (for GET, the cost is a full [200] instead of a
    [304]). [Invalid] is kept distinct for logging or a stricter [400]. *)

val if_match : Bigstring.t -> off:int -> len:int -> etag:string -> condition
(** [if_match buf ~off ~len ~etag] evaluates the [If-Match] field value
    with the {e strong} comparison (§13.1.1): a weak [etag] never matches a
    list, only ["*"].

    For the server (§13.2.2 step 1): [Match] means the condition is true:
    proceed. [No_match] and [Invalid] mean it is false: [412 Precondition
    Failed] (the RFC: "Otherwise, the condition is false"). A malformed
    [If-Match] thus never turns a guarded update into an unguarded one. *)

val if_range : Bigstring.t -> off:int -> len:int -> etag:string -> condition
(** [if_range buf ~off ~len ~etag] evaluates an [If-Range] value that is an
    entity-tag (§13.1.5): [Match] if it is exactly one entity-tag that
    strongly matches [etag] (honour [Range]), [No_match] if it is an
    entity-tag that does not (a weak one never matches; ignore [Range] and
    send [200] with the whole representation), [Invalid] if it is no
    entity-tag at all: it may be an HTTP-date, which the caller checks
    against [Last-Modified]. Surrounding whitespace is ignored. *)

(** {1 Making entity-tags} *)

val max_length : int
(** [max_length] is [44], the longest tag {!write} produces. *)

val write : Bigstring.t -> off:int -> mtime:int -> nsec:int -> size:int -> int
(** [write buf ~off ~mtime ~nsec ~size] writes a strong entity-tag for a
    file at [off] and is the offset just past it: ["\"<mtime>-<size>\""]
    in lower-case hexadecimal without leading zeros when [nsec = 0]
    (exactly nginx's format, so tags survive a switch between the two
    servers), ["\"<mtime>.<nsec>-<size>\""] otherwise.

    [mtime] is the modification time in seconds since the epoch (printed
    as an unsigned 63-bit number, so pre-1970 times stay distinct), [nsec]
    its nanoseconds ([0] when unknown), [size] the length in bytes. Distinct
    triples give distinct tags.

    {b Strength.} Such a tag is "strong" only as far as every change to
    the file changes its mtime or size. With whole seconds (nginx), two
    writes of the same size within one second share a tag; passing
    [nsec] narrows that window to the file system's timestamp
    granularity. An unchanged file copied elsewhere keeps its tag only if
    its mtime is preserved.
    @raise Invalid_argument if [size < 0], [nsec] is outside
    [\[0, 999_999_999\]] or the tag does not fit in [buf] (reserve
    {!max_length}). *)

val to_string : mtime:int -> nsec:int -> size:int -> string
(** [to_string ~mtime ~nsec ~size] is the tag {!write} would write, as a
    fresh string: {b allocates}. For callers that compute a tag once and
    cache it with the file (then compare with {!if_none_match} etc.). *)
