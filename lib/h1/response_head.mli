(** HTTP/1.1 response-head parser for a client (RFC 9112 §4-§6), with the
    body framing decision of §6.3.

    A {!t} is created once per connection and reused for every response on
    it: parsing writes the version, status, one entry per field and the
    framing into the state's own preallocated fields, so {!parse}
    allocates nothing. Strings are {!Span.t}s into the caller's buffer,
    valid while the caller leaves those bytes alone.

    {[
      let rec head off len =
        match Response_head.parse r buf ~off ~len ~meth:Meth.Get with
        | Interim -> (* 100 Continue, 103 Early Hints: fields readable now *)
          let n = Response_head.head_length r in head (off + n) (len - n)
        | Complete -> (* body per Response_head.framing r, from off + head_length *)
        | Partial -> (* read more, call again with the same off *)
        | Error -> (* Response_head.error r; close the connection *)
    ]}

    {2 Incremental input}
    As [Httpz.Request.parse]: [Partial] means no error so far and no end of
    head yet; call again with the same [off] and a larger [len]. A
    resumed head is only looked at again once its empty line may have
    arrived, so a head arriving byte by byte costs linear time, and gives
    the same result as the whole head at once.

    {2 Strictness (decisions)}
    Every line ends in CRLF: a bare LF ({!Bare_lf}) or a CR not followed by
    LF ({!Bare_cr}) is refused, never read leniently, since framing two
    parties read differently is how responses are split. obs-fold is
    refused ({!Obs_fold}, RFC 9112 §5.2 allows it). Whitespace between a
    field name and its colon is refused ({!Space_before_colon}, MUST in
    §5.1). Field values hold no control byte but HTAB. The status line is
    [HTTP/1.x SP 3DIGIT [SP reason] CRLF]: the SP before an empty reason
    may be missing (servers send ["HTTP/1.1 200\r\n"]); [HTTP/1.x] with
    x >= 2 is HTTP/1.1 (RFC 9110 §2.5), another major is
    {!Unsupported_version}; a status outside 100..599 is {!Bad_status}
    (RFC 9110 §15); the reason phrase is checked (no control byte but
    HTAB), bounded by [max_reason], and otherwise ignored.

    {2 Framing (RFC 9112 §6.3)}
    In order: a 101 is {!Tunnel}; a 1xx, 204 or 304, or any answer to
    HEAD, has {!No_body}; a 2xx to CONNECT is {!Tunnel}; a
    Transfer-Encoding gives {!Chunked}; a Content-Length gives {!Length};
    otherwise the body runs {!Until_close}.

    Framing fields are checked whatever the status and method, so a head
    is refused alike whichever request it answers:
    - Transfer-Encoding must be exactly one [chunked], last: any other
      coding is {!Unsupported_transfer_coding} (the RFC would read such a
      body until close; we refuse rather than guess where it ends, and a
      client never asked for one: it sends no [TE]);
    - Transfer-Encoding with Content-Length is {!Length_and_chunked} (§6.3
      rule 3: "ought to be handled as an error"; for a client there is no
      downstream to repair it for);
    - Transfer-Encoding in an HTTP/1.0 response is
      {!Transfer_encoding_http10} (§6.1: the framing is faulty);
    - a Content-Length that is not [1*DIGIT] (a list ["5, 5"] included)
      is {!Bad_content_length}; two different values are
      {!Conflicting_content_length}; equal repeats are accepted. Never
      "pick one".

    [keep_alive] is [false] for {!Until_close} and {!Tunnel}; otherwise
    HTTP/1.1 unless [Connection: close], HTTP/1.0 only with
    [Connection: keep-alive] (tokens compared without case in lists).

    {2 Interim responses}
    A 1xx other than 101 returns [Interim]: its fields are readable until
    the next call; the final response follows at [off + head_length].
    More than [max_interim] of them before a final one is
    {!Too_many_interim}: a server could otherwise keep a client reading
    forever. The count is reset by a final response and by {!reset}. *)

type error =
  | Bad_status_line  (** no SP after the version, or junk after the reason *)
  | Bad_version  (** not [HTTP/DIGIT.DIGIT] *)
  | Unsupported_version  (** a major version other than 1 *)
  | Bad_status  (** not three digits, or outside 100..599 *)
  | Reason_too_long  (** reason phrase longer than [max_reason] *)
  | Bare_cr
  | Bare_lf
  | Obs_fold
  | Bad_header_name
  | Space_before_colon
  | Bad_header_value  (** a control byte other than HTAB in a value *)
  | Too_many_headers  (** more than [max_headers] field lines *)
  | Head_too_large  (** no end of head within [max_head] bytes *)
  | Bad_content_length
  | Conflicting_content_length
  | Content_too_large  (** Content-Length above [max_content_length] *)
  | Bad_transfer_encoding  (** an empty or non-token Transfer-Encoding element *)
  | Unsupported_transfer_coding
  | Length_and_chunked
  | Transfer_encoding_http10
  | Too_many_interim

val error_to_string : error -> string
(** A stable snake_case name. Does not allocate. *)

type limits = {
  max_head : int;  (** bytes of status line, fields and the final CRLF; default 64 KiB *)
  max_headers : int;  (** field lines; default 100; sizes the state's arrays *)
  max_reason : int;  (** bytes of reason phrase; default 1024 *)
  max_interim : int;  (** 1xx heads before a final one; default 8 *)
  max_content_length : int;  (** default 2{^50} *)
}

val default_limits : limits

type t

val create : ?limits:limits -> ?simd:bool -> unit -> t
(** [create ()] allocates the state once. [simd] (default
    {!Simd.available}) reads well-formed field lines with the C kernel, as
    {!Request} does; both ways give the same results.
    @raise Invalid_argument on a non-positive [max_head]/[max_headers], a
    negative other limit, or [max_head >= 2{^31}]. *)

val limits : t -> limits

type status =
  | Complete  (** a final response head (status >= 200, or 101) *)
  | Interim  (** a 1xx head other than 101 *)
  | Partial  (** no error yet, head incomplete *)
  | Error  (** see {!error}; the connection's framing is lost: close it *)

type framing =
  | No_body  (** no content follows; the next response may *)
  | Length  (** exactly {!content_length} bytes ({!Fixed_body}) *)
  | Chunked  (** chunked coding ({!Chunked}, trailers included) *)
  | Until_close  (** everything until the server closes *)
  | Tunnel  (** the connection now carries another protocol (101, CONNECT 2xx) *)

val framing_to_string : framing -> string

val parse : t -> Bigstring.t -> off:int -> len:int -> meth:Meth.t -> status
(** [parse t buf ~off ~len ~meth] parses the head at [off] of the response
    to a request with method [meth], reading only [off .. off + len).
    Does not allocate.
    @raise Invalid_argument if the range is outside [buf]. *)

val reset : t -> unit
(** [reset t] clears every result, the error, the interim count and any
    partial progress: the state is as {!create} made it. For a new
    connection, or after abandoning a response. *)

(** {1 The parsed head} Meaningful after [Complete] or [Interim]. *)

val version : t -> Version.t
val status : t -> int
val reason : t -> Span.t
val header_count : t -> int

val header_name : t -> int -> Header_name.t
(** {b Unchecked}: [0 <= i < header_count t], as for the next two. *)

val header_name_span : t -> int -> Span.t
val header_value : t -> int -> Span.t
(** Without leading and trailing OWS. *)

val find : t -> Header_name.t -> int
val find_next : t -> Header_name.t -> after:int -> int
val find_string : t -> Bigstring.t -> string -> int

val content_length : t -> int
(** The Content-Length, or [-1] when absent (also for {!No_body} heads
    that carry one, e.g. a 304 or an answer to HEAD). *)

val framing : t -> framing
val keep_alive : t -> bool
val head_length : t -> int
(** Bytes from [off] to the end of the head: where the body, or the next
    head after an [Interim], starts. *)

val error : t -> error
val interim_count : t -> int
(** 1xx heads read since the last final one. *)
