(** Writing a response head into a caller-owned buffer (RFC 9112 §4, §5,
    §7.1; RFC 9110 §5.5).

    {v
  status-line  = HTTP-version SP status-code SP [ reason-phrase ] CRLF
  field-line   = field-name ":" OWS field-value OWS CRLF
  field-name   = token                     ; 1*tchar
  field-value  = *field-content
  field-content = field-vchar [ 1*( SP / HTAB / field-vchar ) field-vchar ]
  field-vchar  = VCHAR / obs-text          ; %x21-7E / %x80-FF
    v}

    Every writer takes [buf ~off], writes at [off] and returns the offset
    just past what it wrote, so a head is a chain:
    {[
      let o = Response.status_line buf ~off:0 Http_1_1 Ok in
      let o = Response.date buf ~off:o cache ~now in
      let o = Response.header buf ~off:o Content_type "text/html" in
      let o = Response.header_int buf ~off:o Content_length 1234 in
      let o = Response.end_head buf ~off:o in
      (* send bytes [0, o) of buf *)
    ]}
    The caller owns [buf]; httpz keeps no reference to it. Field names
    are written as given (known names in their canonical spelling) and a
    single SP separates the colon from the value.

    {b All or nothing.} A call either writes its whole line and returns,
    or raises before writing a single byte, so a refused call never leaves
    a partial line in the buffer:
    - {!Invalid_field} when the name is not a token, the value is not a
      [field-value], or a number is negative;
    - {!No_space} when the line does not fit in [\[off, length buf)] (also
      when [off < 0]). The caller can flush what it has and retry, or
      answer with a smaller response.

    {b What a value may hold.} Exactly the RFC 9110 §5.5 [field-value]
    grammar: visible ASCII, obs-text (bytes [0x80]-[0xFF]), SP and HTAB,
    not starting or ending with SP or HTAB. Every other control byte is
    refused: CR, LF and NUL, which would split the response or truncate
    it in some recipients, and also the other CTLs and DEL, which
    RFC 9110 §5.5 forbids and which no legitimate value needs. The empty
    value is allowed. Values are checked eight bytes at a time.

    {b Allocation.} No function here allocates, on success or on refusal:
    the exceptions are constant and raised with [raise_notrace]. *)

exception Invalid_field
(** A name, value or number that cannot be written as asked. Constant. *)

exception No_space
(** The buffer has too little room left for the line. Constant. *)

(** {1 Head} *)

val status_line : Bigstring.t -> off:int -> Version.t -> Status.t -> int
(** [status_line buf ~off v s] writes {!Status.line} [v s], for example
    ["HTTP/1.1 404 Not Found\r\n"], with one copy of a preformatted
    string. *)

val header : Bigstring.t -> off:int -> Header_name.t -> string -> int
(** [header buf ~off name value] writes ["Name: value\r\n"] with [name] in
    its canonical spelling ({!Header_name.to_string}).
    @raise Invalid_field when [name] is [Other] (it has no spelling: use
    {!header_s}) or [value] is not a [field-value]. *)

val header_s : Bigstring.t -> off:int -> string -> string -> int
(** [header_s buf ~off name value] writes ["name: value\r\n"].
    @raise Invalid_field when [name] is not a [token] (empty, or holding
    a byte outside [tchar], such as SP, [":"] or CR) or [value] is not a
    [field-value]. *)

val header_int : Bigstring.t -> off:int -> Header_name.t -> int -> int
(** [header_int buf ~off name n] writes [n] in decimal, as
    [Content-Length] and [Age] want.
    @raise Invalid_field when [name] is [Other] or [n < 0]. *)

val header_span : Bigstring.t -> off:int -> Header_name.t -> Bigstring.t -> Span.t -> int
(** [header_span buf ~off name src s] writes the value held by span [s] of
    buffer [src] (a field read from a request, say), copied directly.
    [src] may be [buf] itself provided the span does not overlap the
    bytes being written.
    @raise Invalid_field when [name] is [Other] or the bytes are not a
    [field-value].
    @raise Invalid_argument when [s] is not inside [src]. *)

val header_date : Bigstring.t -> off:int -> Header_name.t -> int -> int
(** [header_date buf ~off name t] writes Unix time [t] as an IMF-fixdate
    ({!Date.write_imf_fixdate}), as [Last-Modified] and [Expires] want.
    @raise Invalid_field when [name] is [Other] or [t] is outside
    [\[Date.min_time, Date.max_time\]]. *)

val header_date_cached : Bigstring.t -> off:int -> Header_name.t -> Date.Cache.t -> int -> int
(** [header_date_cached buf ~off name cache t]: as {!header_date}, the date
    formatted through [cache], which keeps the last time it formatted: for
    a value that repeats, such as the Last-Modified of a file served again
    and again, it is a copy.
    @raise Invalid_field as {!header_date}. *)

val date : Bigstring.t -> off:int -> Date.Cache.t -> now:int -> int
(** [date buf ~off cache ~now] writes ["Date: <IMF-fixdate of now>\r\n"]
    (37 bytes) through the per-second {!Date.Cache}.
    @raise Invalid_field when [now] is outside
    [\[Date.min_time, Date.max_time\]]. *)

val end_head : Bigstring.t -> off:int -> int
(** [end_head buf ~off] writes the empty line (CRLF) that ends the head. *)

(** {1 Chunked body framing (RFC 9112 §7.1)}

    {v
  chunked-body = *chunk last-chunk trailer-section CRLF
  chunk        = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
  last-chunk   = 1*("0") [ chunk-ext ] CRLF
    v}

    The CRLF that ends a chunk's data is the easiest byte pair to forget,
    so the writers that follow data include it. A chunked body is written
    as
    {v
  chunk_header n1, data (n1 bytes),
  chunk_header_after_data n2, data (n2 bytes), ...,
  last_chunk_after_data
    v}
    or, for an empty body, [last_chunk] alone. {!end_chunk} is there for
    callers that would rather close each chunk on its own. Sizes are
    written in lower-case hexadecimal, without chunk extensions; no
    trailer fields are written. A zero size is refused: it would end the
    body early. *)

val chunk_header : Bigstring.t -> off:int -> int -> int
(** [chunk_header buf ~off n] writes ["<hex n>\r\n"], opening a chunk of
    [n] bytes: [chunk_header buf ~off 4096] writes ["1000\r\n"].
    @raise Invalid_field when [n <= 0]. *)

val chunk_header_after_data : Bigstring.t -> off:int -> int -> int
(** [chunk_header_after_data buf ~off n] writes ["\r\n<hex n>\r\n"]: it
    ends the previous chunk's data and opens a chunk of [n] bytes.
    @raise Invalid_field when [n <= 0]. *)

val end_chunk : Bigstring.t -> off:int -> int
(** [end_chunk buf ~off] writes the CRLF that ends a chunk's data. *)

val last_chunk : Bigstring.t -> off:int -> int
(** [last_chunk buf ~off] writes ["0\r\n\r\n"]: the last chunk and an
    empty trailer section, ending the body when no chunk is open. *)

val last_chunk_after_data : Bigstring.t -> off:int -> int
(** [last_chunk_after_data buf ~off] writes ["\r\n0\r\n\r\n"]: it ends the
    previous chunk's data and the body. *)

val max_chunk_size : int
(** [max_chunk_size] is [2{^60} - 1], the largest size the chunk writers
    accept (15 hex digits, the most {!Chunked} decodes); larger sizes raise
    [Invalid_field]. *)

val max_chunk_header_length : int
(** [max_chunk_header_length] is [19], the most
    {!chunk_header_after_data} writes (CRLF, 15 hex digits, CRLF): room to
    reserve in front of chunk data. *)

(** {1 Primitives} *)

val write_string : Bigstring.t -> off:int -> string -> int
(** [write_string buf ~off s] copies [s] verbatim. Nothing is validated:
    for bytes the caller has already vetted (a preformatted head, body
    bytes). *)

val write_int : Bigstring.t -> off:int -> int -> int
(** [write_int buf ~off n] writes [n] in decimal, digit by digit, with no
    sign or padding.
    @raise Invalid_field when [n < 0]. *)

val is_token : string -> bool
(** [is_token s] is [true] iff [s] is a non-empty sequence of [tchar]s
    (RFC 9110 §5.6.2), i.e. a valid field name. *)

val is_field_value : string -> bool
(** [is_field_value s] is [true] iff [s] matches [field-value] (see the
    rules above): what {!header} accepts as a value. *)
