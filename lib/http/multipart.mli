(** A streaming [multipart/form-data] parser (RFC 7578 over RFC 2046 §5.1).

    The caller owns one [t] (made once with {!create}, {!reset} for each
    body), hands it the body piece by piece ({!feed}, e.g. each
    [Ctx.read_body] piece) and pulls events with {!next} until it asks for
    more ([Await]), the body is over ([End]) or it failed ([Error]). No
    callback, no allocation: {!next} returns a constant constructor and the
    event's contents are read with accessors, as {!Span.t}s.

    {2 Grammar, and where this parser decides}
    - The body is [preamble, "--" boundary, parts..., "--" boundary "--",
      epilogue]; every delimiter but a first one at the very start of the
      body is [CRLF "--" boundary]. Preamble and epilogue are ignored
      (RFC 2046 §5.1.1).
    - After a delimiter: ["--"] closes the body; else optional transport
      padding (SP / HTAB) then CRLF opens a part. Anything else there is
      {!Malformed_delimiter}: RFC 2046 forbids the delimiter inside a part,
      so a line starting with it is not data (Python's [email] treats such
      a line as data; a deliberate difference, see test/lib/http/multipart).
    - {b CRLF is required}: a delimiter preceded by a bare LF is not one (its
      bytes are part data), and a part-header line ending in a bare LF is
      {!Malformed_header}. Browsers and curl always send CRLF; accepting LF
      would let a file that contains ["\n--boundary"] end its part early.
    - Part header lines are [token ":" OWS value OWS CRLF], the value
      without control bytes but HTAB; obs-fold is refused
      ({!Malformed_header}). The block ends at an empty line.
    - Of the part's fields, [Content-Disposition] (the first one) is parsed
      into its type and its [name] and [filename] parameters (token or
      quoted-string; quotes stripped, backslash escapes left as they are:
      browsers percent-encode quotes in names instead), and
      [Content-Type] is kept as a span. [filename*] (RFC 7578 §4.2 says
      senders should not use it) is ignored. A part without
      [Content-Disposition] is reported with empty spans: refusing it is
      the application's choice.

    {2 Validity of spans}
    The part's header spans ({!name}, {!filename}, {!content_type},
    {!disposition}) are spans of {!header_buffer}: the part's header block
    is copied into state-owned storage, so they stay valid from [Part]
    until the next [Part] (across pieces). {!data} is a span of
    {!data_buffer}: either the piece being fed or, for bytes held back
    because they could begin a delimiter that the next piece completes
    (at most the delimiter's length, 4 + boundary bytes), state-owned
    storage; it is valid until the next call to {!next} or {!feed}.

    {2 Cost}
    {!create} allocates the state (a header buffer of
    [limits.max_header_bytes] bytes and a delimiter-sized hold buffer);
    {!reset}, {!feed}, {!next} and the accessors allocate nothing
    (test/lib/http/multipart measures 0 minor words over whole multi-part bodies).
    Delimiter candidates are found with {!Simd.find_byte} (the CR that
    starts [CRLF "--" boundary]), 16 bytes per compare. *)

type error =
  | No_boundary  (** The body ended without any delimiter (it was all preamble). *)
  | Malformed_delimiter  (** A delimiter followed by neither ["--"] nor padding and CRLF. *)
  | Malformed_header  (** A part header line that is not [name: value CRLF], or a bad
                          [Content-Disposition] (unterminated quote, parameter without [=]). *)
  | Truncated  (** The body ended before the closing delimiter. *)
  | Too_many_parts  (** More parts than [limits.max_parts]. *)
  | Header_too_large  (** A part's header block over [limits.max_header_bytes]. *)
  | Too_large  (** More body bytes fed than [limits.max_total]. *)

val error_to_string : error -> string

type event =
  | Part  (** A part begins: its header spans are ready. *)
  | Data  (** Bytes of the current part: {!data} of {!data_buffer} (never empty). *)
  | Part_end  (** The current part is complete. *)
  | End  (** The closing delimiter was read; the rest is epilogue (ignored). Repeated by
             every later call. *)
  | Await  (** The piece is consumed: {!feed} the next one, or {!finish}. *)
  | Error  (** See {!error}; repeated by every later call. *)

type limits = {
  max_parts : int;  (** parts in one body *)
  max_header_bytes : int;  (** one part's header block, final empty line included *)
  max_total : int;  (** body bytes, preamble and epilogue included *)
}

val default_limits : limits
(** 1000 parts, 16 KiB of header per part, no total limit ([max_int]). *)

type t

val create : ?limits:limits -> unit -> t

val reset : t -> Bigstring.t -> Span.t -> bool
(** [reset t buf boundary] starts a new body delimited by the [boundary]
    bytes (copied into [t], so [buf] may change afterwards). [false] (and
    [t] in the {!Error} state with {!No_boundary}) when the boundary is not
    1 to 70 of RFC 2046's bchars, not ending in a space. *)

val reset_string : t -> string -> bool
(** As {!reset} with the boundary as a string. *)

val valid_boundary : Bigstring.t -> Span.t -> bool
(** The check {!reset} makes. *)

val feed : t -> Bigstring.t -> off:int -> len:int -> unit
(** [feed t buf ~off ~len] gives the next piece of the body. Call it only
    when {!next} answered [Await] (or right after {!reset}); the bytes must
    stay unchanged until [next] answers [Await] again. A piece past
    [limits.max_total] puts [t] in the {!Error} state ({!Too_large}). *)

val finish : t -> unit
(** No more input: [next] then answers [End] if the closing delimiter was
    read, else [Error] ({!Truncated}, or {!No_boundary} if no delimiter at
    all was seen). *)

val next : t -> event

val error : t -> error
(** The error after [next] answered [Error]. *)

val header_buffer : t -> Bigstring.t
val disposition : t -> Span.t
(** The disposition type (["form-data"]), empty when the part has no
    [Content-Disposition]. *)

val name : t -> Span.t
val has_filename : t -> bool
val filename : t -> Span.t
val content_type : t -> Span.t
(** The [Content-Type] field value, empty when absent. *)

val headers : t -> Span.t
(** The whole header block of the part (every line with its CRLF, the
    final empty line excluded), for other fields. *)

val data_buffer : t -> Bigstring.t
val data : t -> Span.t

val parts : t -> int
(** Parts begun so far in this body. *)

val total : t -> int
(** Body bytes fed so far. *)
