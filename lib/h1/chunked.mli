(** Incremental decoder for the chunked transfer coding
    ({{:https://www.rfc-editor.org/rfc/rfc9112#section-7.1} RFC 9112 §7.1}).

    {v
  chunked-body   = *chunk last-chunk trailer-section CRLF
  chunk          = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
  chunk-size     = 1*HEXDIG
  last-chunk     = 1*("0") [ chunk-ext ] CRLF
  chunk-ext      = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
  chunk-ext-name = token
  chunk-ext-val  = token / quoted-string
  trailer-section = *( field-line CRLF )
    v}

    The decoder is a byte-exact state machine over successive slices of
    input: a body may arrive split at {e any} byte (inside the size line,
    between CR and LF, inside a trailer), and the decoder remembers where it
    was. It never copies data: each {!Data} result names a range of the
    slice it was just given.

    {[
      let c = Chunked.create () in
      (* per request: Chunked.reset c *)
      let rec loop off len =
        match Chunked.decode c buf ~off ~len with
        | Data ->
            deliver buf (Chunked.data_off c) (Chunked.data_len c);
            let k = Chunked.consumed c in loop (off + k) (len - k)
        | Need_more -> (* all [len] bytes used: read more, call again *) ...
        | Done -> (* next request starts at off + consumed c *) ...
        | Error -> respond (Chunked.error_status (Chunked.error c))
    ]}

    {b Strictness.} Every line ends in CRLF: a bare LF (the RFC 9112 §2.2
    "MAY" leniency) is refused as {!Bad_crlf} everywhere, because framing
    that two parties read differently is how requests are smuggled. A
    chunk size has at most 15 hex digits, leading zeros included, so it
    always fits OCaml's 63-bit [int] (no sign, no blank, no [0x]).
    Whitespace after the size is accepted only where [chunk-ext]'s [BWS]
    puts it, i.e. before [";"] or around ["="], never just before CRLF.
    Chunk extensions are validated, then ignored (none is defined).
    Trailer fields are checked like header fields (token name, no space
    before the colon, no obs-fold, no control byte in the value), counted,
    and {e not} exposed: a trailer can span slices, and keeping a copy would
    cost a buffer per connection for a feature no client we serve uses.

    {b Forbidden trailers.} RFC 9110 §6.5.1 lists what cannot be processed
    after the content: framing, routing, request modifiers, authentication
    and content format. A trailer naming one of those is refused
    ({!Forbidden_trailer}, see {!forbidden_trailer} for the exact list)
    rather than dropped, because a component that later merges trailers
    into the header section would let it change how the message was read.

    {b Ownership.} The decoder keeps no reference to the slices it is
    given. A {!Data} span ({!data_off}, {!data_len}) is valid as long as the
    caller leaves those bytes of its buffer alone.

    {b Allocation.} {!decode} and every accessor allocate nothing;
    {!create} allocates the state (and a 32-byte scratch buffer) once. *)

(** {1 Errors} *)

type error =
  | Bad_size  (** chunk-size missing or holding a non-HEXDIG ([-1], [+1], [0x1], [1x]) *)
  | Size_overflow  (** more than 15 hex digits *)
  | Bad_extension  (** a chunk-ext that is not [token [= token / quoted-string]] *)
  | Line_too_long  (** the chunk-size line is longer than [max_chunk_line] *)
  | Bad_crlf  (** a line not ended by CRLF: bare LF, or missing CRLF after data *)
  | Bad_trailer  (** a malformed trailer field line *)
  | Forbidden_trailer  (** a trailer field that must not be a trailer *)
  | Trailer_too_large  (** trailer fields longer than [max_trailer_bytes] *)
  | Body_too_large  (** the chunk sizes add up to more than [max_body] *)

val error_status : error -> int
(** [error_status e] is the status to answer with: [413] (Content Too
    Large) for {!Body_too_large}, [431] (Request Header Fields Too Large,
    RFC 6585 §5; trailer fields are fields) for {!Trailer_too_large}, [400]
    for the rest. After any error the framing of the connection is lost:
    answer and close. *)

val error_to_string : error -> string
(** [error_to_string e] is a stable snake_case name (["size_overflow"],
    ["bad_crlf"], …). Does not allocate. *)

(** {1 Decoding} *)

type t
(** Caller-owned decoder state: one per connection, {!reset} per body. *)

type status =
  | Data  (** [data_len t > 0] bytes of content at [data_off t] *)
  | Need_more  (** all input consumed; nothing to deliver yet *)
  | Done  (** last chunk, trailer section and final CRLF consumed *)
  | Error  (** invalid input: see {!error} *)

val default_max_chunk_line : int
(** [4096]: bytes of a chunk-size line (size and extensions, CRLF
    excluded). Real clients send [1*HEXDIG] and no extension; 4 KiB leaves
    room for any extension use while bounding what one line can cost. *)

val default_max_trailer_bytes : int
(** [8192]: bytes of the trailer field lines, CRLFs included, the final
    empty line excluded; the same order as a typical header limit. *)

val default_max_body : int

val create : ?max_chunk_line:int -> ?max_trailer_bytes:int -> ?max_body:int -> unit -> t
(** [create ()] is a decoder ready for a body. [max_body] (default
    {!default_max_body}, 1 GiB: the same bound {!Request.default_limits}
    puts on Content-Length, so chunking is no way around it) bounds the sum
    of the chunk sizes; it is checked
    as soon as a chunk size is read, before any of its data is accepted.
    @raise Invalid_argument if a limit is negative. *)

val reset : t -> unit
(** [reset t] readies [t] for the next body, keeping its limits. *)

val set_max_body : t -> int -> unit
(** [set_max_body t n] sets the body limit for the current body (it
    survives {!reset}), e.g. per route. [n < 0] means no limit. *)

val decode : t -> Bigstring.t -> off:int -> len:int -> status
(** [decode t buf ~off ~len] reads the slice [buf.{off .. off+len-1}] from
    where the previous call stopped, and stops at the first of: some
    content is available ([Data]), the slice is used up ([Need_more]), the
    body ended ([Done]) or an error ([Error]). {!consumed} tells how many
    bytes it used: advance [off] by that much and call again. Bytes after
    [Done] are not consumed: they belong to the next pipelined message.

    A [Data] span is always inside the slice, non-empty, and the bytes
    consumed by this call end right after it. On [Error], [consumed t] is
    the offset of the offending byte in the slice; on [Done] it includes
    the final LF. After [Done] or [Error], calls return the same status and
    consume nothing until {!reset}. [len = 0] gives [Need_more] (or the
    terminal status). Does not allocate. *)

val consumed : t -> int
(** [consumed t] is the number of bytes the last {!decode} call used. *)

val data_off : t -> int
(** [data_off t] is the offset, in the buffer given to the last {!decode},
    of the content it returned with [Data]. *)

val data_len : t -> int
(** [data_len t] is the length of that content; [0] unless the last
    status was [Data]. *)

val error : t -> error
(** [error t] is why {!decode} returned [Error]; meaningless otherwise. *)

val is_done : t -> bool
(** [is_done t] is [true] once {!decode} has returned [Done]. *)

val body_bytes : t -> int
(** [body_bytes t] is the sum of the chunk sizes read so far: once [Done],
    the length of the decoded body. *)

val trailer_count : t -> int
(** [trailer_count t] is the number of trailer field lines read so far. *)

val forbidden_trailer : Header_name.t -> bool
(** [forbidden_trailer n] is [true] for the fields refused in a trailer
    section:
    framing and connection control ([Transfer-Encoding], [Content-Length],
    [Trailer], [Connection], [Keep-Alive], [Upgrade], [TE]); routing
    ([Host]); request modifiers ([Expect], [Max-Forwards], [Range],
    [If-Match], [If-None-Match], [If-Modified-Since],
    [If-Unmodified-Since], [If-Range], [Cache-Control], [Pragma]);
    authentication ([Authorization], [Proxy-Authorization],
    [WWW-Authenticate], [Proxy-Authenticate], [Cookie], [Set-Cookie]);
    content format ([Content-Encoding], [Content-Type], [Content-Range]).
    Metadata a sender may only know once the content is sent ([ETag],
    [Expires], [Date], [Server-Timing], digests, …) and unknown names
    ({!Header_name.Other}) are allowed. *)
