(** Byte ranges: the [Range] request field and the [Content-Range] response
    field ({{:https://www.rfc-editor.org/rfc/rfc9110#section-14} RFC 9110 §14}).

    A server answers a range request in three steps, all allocation-free:

    {ol
    {- {!parse} reads the [Range] field value into a caller-owned {!t} and
       says whether the server should honour it at all;}
    {- {!resolve} turns the parsed specs into concrete byte intervals of the
       selected representation, given its length, dropping the unsatisfiable
       ones and coalescing those that overlap or touch;}
    {- {!write_content_range} / {!write_unsatisfied} write the
       [Content-Range] value of the [206] (or of each multipart part) or of
       the [416].}}

    {[
      match Range.parse r buf ~off ~len with
      | Range.Invalid | Range.Not_bytes | Range.Too_many -> (* 200, whole *)
      | Range.Valid ->
        match Range.resolve r ~length with
        | Range.Unsatisfiable -> (* 416, "bytes */length" *)
        | Range.Empty -> (* 200, the (empty) representation *)
        | Range.Satisfiable ->
          if Range.count r = 1 then (* 206, single part *)
          else (* 206, multipart/byteranges, parts 0 .. count r - 1 *)
    ]}

    The RFC leaves the server free to ignore a [Range] field (§14.2): a
    [200] with the whole representation is always a correct answer, so
    every doubt below resolves to "ignore the field". Whether [Range]
    applies at all (only to [GET], only when the response would otherwise
    be a [200], after [If-Range] and the other preconditions) is the
    caller's decision.

    {b Grammar} (RFC 9110 §14.1, §14.1.2, §5.6.1):
{v
  Range            = ranges-specifier
  ranges-specifier = range-unit "=" range-set
  range-unit       = token                    ; case-insensitive
  range-set        = 1#range-spec
  range-spec       = int-range / suffix-range / other-range
  int-range        = first-pos "-" [ last-pos ]
  suffix-range     = "-" suffix-length
  first-pos        = 1*DIGIT
  last-pos         = 1*DIGIT
  suffix-length    = 1*DIGIT
v}
    Accepted leniencies, each harmless: optional whitespace (SP / HTAB)
    after ["="], before and after each [","] and at both ends (the RFC's
    own example is [bytes= 0-999, 4500-5499, -1000]); empty list elements
    ([bytes=0-1,,5-6]), which §5.6.1.2 says a recipient MUST accept.
    Nothing else: no sign, no whitespace inside a number or between a
    number and its ["-"], no [other-range] for the [bytes] unit.

    {b Ownership.} A {!t} belongs to one connection (or one request at a
    time) and is overwritten by each {!parse} and {!resolve}. It never
    refers to the buffer it was parsed from: the numbers are copied out, so
    the caller may reuse the read buffer as soon as {!parse} returns.

    {b Allocation.} Only {!create} allocates. {!parse}, {!resolve}, the
    accessors and the writers allocate nothing (tested: 0.0 minor words per
    call); they raise only [Invalid_argument] on a caller's programming
    error, never on wire data. *)

type t
(** Reusable parse state: up to [max_ranges] parsed specs and as many
    resolved intervals, in preallocated [int array]s. *)

val default_max_ranges : int
(** [default_max_ranges] is [16]. *)

val max_max_ranges : int
(** [max_max_ranges] is [256], the largest bound {!create} accepts. *)

val create : ?max_ranges:int -> unit -> t
(** [create ?max_ranges ()] is a fresh state that accepts at most
    [max_ranges] (default {!default_max_ranges}) range-specs per field.

    {b Why a bound.} Every range in a multipart answer costs the server a
    part header (~80 bytes) and a seek, whatever its size: a client that
    asks for thousands of one-byte or overlapping ranges turns a small
    request into a large amount of work and output. This is the
    "Apache Killer" denial of service, CVE-2011-3192, after which Apache
    added [MaxRanges] (default 200) and nginx [max_ranges]; RFC 9110 §14.2
    and §17.15 let a server ignore such requests. Sixteen is above what
    real clients send (a single range, or a handful from PDF or media
    readers) and a request over the bound simply gets the whole
    representation. {!resolve} is quadratic in the number of specs
    (coalescing), hence the hard ceiling {!max_max_ranges}.

    Allocates (four arrays of [max_ranges] ints): once per connection.
    @raise Invalid_argument unless [1 <= max_ranges <= max_max_ranges]. *)

val max_ranges : t -> int
(** [max_ranges t] is the bound [t] was created with. *)

(** {1 Parsing the [Range] field} *)

type parse_result =
  | Valid
      (** a well-formed [bytes] range-set of at most [max_ranges]
          range-specs: go on with {!resolve}. *)
  | Invalid
      (** malformed: no ["="], a unit that is not a token, an empty
          range-set, a spec that is neither [first-last], [first-] nor
          [-suffix], [last < first], a non-digit, a number above [max_int]
          (~4.6e18; no representation is that long, and refusing beats
          wrapping around). The server ignores the field and serves the
          whole representation ([200]); RFC 9110 §14.2 allows it. *)
  | Too_many
      (** more than [max_ranges] range-specs (see {!create}). The server
          ignores the field and answers [200] (as Apache and nginx do
          when their limits are exceeded). Reported as soon as a
          well-formed element [max_ranges + 1] is read: the rest of the
          value is not examined (a malformed element before it gives
          [Invalid]). *)
  | Not_bytes
      (** a syntactically valid range unit other than [bytes] (matched
          case-insensitively), e.g. [items=0-1]. An origin server MUST
          ignore a Range with a unit it does not understand (§14.2) and
          answer [200]; a proxy would forward it. *)

val parse : t -> Bigstring.t -> off:int -> len:int -> parse_result
(** [parse t buf ~off ~len] reads the [len] bytes of [buf] at [off] as a
    [Range] field value (the request parser's value span, without the
    field name or line ending) and stores its range-specs in [t], in the
    order they appear. Bytes outside [\[off, off + len)] are never read.
    After any result but [Valid], [t] holds no spec (a later {!resolve}
    answers [Unsatisfiable]). Never raises on any input. *)

val spec_count : t -> int
(** [spec_count t] is the number of range-specs the last {!parse} stored:
    [0] unless it returned [Valid], in which case [1 <= spec_count t <=
    max_ranges t]. Empty list elements are not specs. *)

(** {1 Resolving against a representation} *)

type resolution =
  | Satisfiable
      (** at least one interval: {!count} is [>= 1]. Answer [206]: a
          single part when [count t = 1] (RFC 9110 §15.3.7 forbids a
          multipart answer to a request for one range; coalescing may
          also turn several specs into one interval), else
          [multipart/byteranges] with parts [0 .. count t - 1]. *)
  | Unsatisfiable
      (** no spec selects any byte (every [first-pos >= length], every
          suffix-length is [0]): answer [416] with [Content-Range] from
          {!write_unsatisfied} (RFC 9110 §15.5.17). *)
  | Empty
      (** [length = 0] and some suffix-range has a non-zero length. The
          RFC calls that set satisfiable (§14.1.2: "if the selected
          representation has zero length, the only satisfiable form of
          range-spec is a suffix-range with a non-zero suffix-length"),
          but no [first-last] pair can describe zero bytes: answer [200]
          with the empty representation, as §14.2 allows a server to
          ignore Range when the representation has no content. *)

val resolve : t -> length:int -> resolution
(** [resolve t ~length] computes, from the specs of the last {!parse}, the
    byte intervals of a representation of [length] bytes
    ([0 <= length <= max_int], so files far beyond 4 GiB are exact), per
    RFC 9110 §14.1.2:
    - [first-last]: [\[first, min last (length - 1)\]], dropped when
      [first >= length];
    - [first-]: [\[first, length - 1\]], dropped when [first >= length];
    - [-n]: the last [n] bytes, [\[max 0 (length - n), length - 1\]] (the
      whole representation when [n >= length]), dropped when [n = 0].

    {b Coalescing.} Intervals that overlap {e or touch} (the next starts
    right after the previous ends) are merged into one, as §15.3.7.2
    allows; so [bytes=500-600,601-999] and [bytes=500-700,601-999] both
    resolve to the single interval [500-999]. Disjoint intervals keep the
    order of the request (the order §15.3.7.2 says parts SHOULD follow); a
    merged interval takes the place of the earliest spec it absorbed.
    {e Invariants} after [Satisfiable], for [0 <= i < j < count t]:
    [0 <= start t i <= stop t i < length], and intervals [i] and [j]
    neither overlap nor touch. Hence their total size is at most
    [length], whatever the client sent: overlapping ranges cannot
    amplify the response.

    [resolve] does not change the parsed specs: it may be called again
    with another length. Quadratic in {!spec_count} in the worst case
    (bounded by [max_ranges t]).
    @raise Invalid_argument if [length < 0]. *)

val count : t -> int
(** [count t] is the number of intervals of the last {!resolve}: [>= 1]
    after [Satisfiable], [0] otherwise (and before any [resolve]). *)

val start : t -> int -> int
(** [start t i] is the first byte offset of interval [i], for
    [0 <= i < count t]. Other indices below [max_ranges t] give stale
    values; beyond it, [Invalid_argument]. *)

val stop : t -> int -> int
(** [stop t i] is the last byte offset of interval [i], {e inclusive}, as in
    [Content-Range]; the interval holds [stop t i - start t i + 1] bytes. *)

(** {1 Writing [Content-Range]} *)

val write_content_range :
  Bigstring.t -> off:int -> first:int -> last:int -> length:int -> int
(** [write_content_range buf ~off ~first ~last ~length] writes
    ["bytes <first>-<last>/<length>"] at [off] (the field value only: no
    name, no CRLF) and is the offset just past it. At most
    {!content_range_max_length} bytes.
    @raise Invalid_argument unless [0 <= first <= last < length] (§14.4
    makes any other value invalid; the writer refuses to emit one) and the
    text fits in [buf]. *)

val write_unsatisfied : Bigstring.t -> off:int -> length:int -> int
(** [write_unsatisfied buf ~off ~length] writes ["bytes */<length>"], the
    [Content-Range] of a [416], and is the offset just past it.
    @raise Invalid_argument if [length < 0] or the text does not fit. *)

val content_range_max_length : int
(** [content_range_max_length] is [65], the longest text
    {!write_content_range} can produce (three 19-digit numbers); reserve
    that much to never hit [Invalid_argument]. *)
