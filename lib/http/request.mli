(** Request-head parser (RFC 9112 §2-§3, §5-§6).

    A {!t} is created once per connection and reused for every request on
    it: parsing writes the method, target, version, one entry per header
    field and the framing facts into the state's own preallocated fields and
    arrays, so {!parse} allocates nothing. Results are read with the
    accessors below; strings are {!Span.t}s into the caller's buffer.

    {2 Ownership and validity}
    The caller owns the buffer. After [Complete], every span refers to bytes
    in [off .. off + head_length t) and stays valid until the caller changes
    those bytes (typically: until it moves or overwrites its read buffer) or
    calls {!parse} again. The state keeps no reference to the buffer.

    {2 Incremental input}
    [Partial] means "the head is not all here yet" (and no error was seen
    in the bytes examined so far). Call {!parse} again with
    the same [off] once more bytes have been appended ([len] larger): the
    state remembers how far it has looked, so a head that arrives one byte at
    a time costs time linear in its size (the end-of-head search restarts
    three bytes before where it stopped, as picohttpparser's [last_len]
    does). Any other call — after [Complete] or [Error], at a different
    [off], or with a smaller [len] — starts a new request.

    The price of linear time: once a head has been [Partial], later calls
    look only for its end, so an invalid byte in bytes that arrive later is
    reported when the empty line ending the head arrives (with the same
    error as for the whole input), or as {!Parse_error.Head_too_large} if
    the head never ends within [max_head]. Either way it is an error, never
    a different accepted request.

    {2 Errors}
    [Error] means the head breaks a rule of RFC 9110/9112 or a limit:
    {!error} says which, and {!Parse_error.status} which status to answer.
    The connection's framing is then unknowable: answer and close. *)

type limits = {
  max_head : int;
      (** Bytes of request line + fields + final CRLF. Default 32 KiB, like
          the original httpz's read buffer (nginx's default is 1 KiB plus
          8 KiB large buffers; Node's is 16 KiB). Over it: {!Parse_error.Head_too_large}. *)
  max_headers : int;
      (** Field lines. Default 100 (Node/Go's defaults are of this size). Over it:
          {!Parse_error.Too_many_headers}. Sizes the state's arrays. *)
  max_target : int;
      (** Bytes of request-target. Default 8 KiB, RFC 9112 §3's recommended
          minimum support. Over it: {!Parse_error.Target_too_long}. *)
  max_content_length : int;
      (** Largest Content-Length accepted. Default 1 GiB. Over it:
          {!Parse_error.Content_too_large}. *)
}

val default_limits : limits

type t

val create : ?limits:limits -> ?simd:bool -> unit -> t
(** [create ()] is a fresh state with [default_limits]. Allocates (once per
    connection). [simd] (default {!Simd.available}) sends the
    request-target, the Host value and every well-formed field line
    through the C kernel ({!Simd}); the line where the kernel stops (the
    empty line, an invalid or incomplete one) and all error reporting stay
    in OCaml. [~simd:false] keeps every byte in the portable OCaml scanners
    ({!Swar}). Both give the same status, spans, facts and errors (test/lib/core/simd
    compares them on every conformance vector and a fuzz corpus).
    @raise Invalid_argument if [max_head], [max_headers] or [max_target] is
    not positive, [max_content_length] is negative, or [max_head] or
    [max_target] is [2{^31}] or more (spans could not hold them). *)

val limits : t -> limits

val simd : t -> bool
(** Whether [t] parses with the C kernel. *)

type status =
  | Complete  (** the whole head is parsed and valid *)
  | Partial   (** no error so far, but the head is not complete *)
  | Error     (** the head is invalid: see {!error} *)

val parse : t -> Bigstring.t -> off:int -> len:int -> status
(** [parse t buf ~off ~len] parses the request head that starts at [off],
    reading only bytes in [off .. off + len). Does not allocate.
    @raise Invalid_argument if the range is outside [buf], or reaches past
    offset [2{^31}] within [max_head]. *)

val reset : t -> unit
(** [reset t] forgets any partial progress. {!parse} already starts afresh
    after [Complete]/[Error]; [reset] is for abandoning a [Partial] head. *)

(** {1 The parsed head} Meaningful after [Complete]. *)

(** {1 A head given as fields}

    For a head that arrived otherwise (HTTP/2's HPACK): its method, target
    and fields, already in a buffer [b], are checked as {!parse} checks
    them (method a token, the target's bytes and form, names tokens,
    values without control bytes but HTAB, the field semantics and the
    limits), and the accessors below then answer as after a parse, with
    the [version] given ({!Version.Http_2} for an HTTP/2 stream; it is
    judged as HTTP/1.1: Host, or an authority, is required, and no
    keep-alive semantics apply). Call {!build_start}, {!build_field} for each field in
    order (an authority standing in for a missing Host is a Host field),
    then {!build_end}; a [false] means refused, with {!error} saying why,
    and the rest is not called. The spans must stay valid as long as the
    request is used. No step allocates. *)

val build_start : t -> Bigstring.t -> version:Version.t -> meth:Span.t -> target:Span.t -> bool

val build_start_known :
  t -> Bigstring.t -> version:Version.t -> meth:Span.t -> known:Meth.t -> target:Span.t -> bool
(** As {!build_start} when the caller has matched the method's bytes
    already: [known] must be [Meth.of_buffer] of them. A known method is a
    token, so its bytes are not scanned again; [Meth.Other] goes through
    {!build_start}'s whole check. *)

val build_field : t -> Bigstring.t -> Header_name.t -> name:Span.t -> value:Span.t -> bool
val build_field_checked : t -> Bigstring.t -> Header_name.t -> name:Span.t -> value:Span.t -> bool
(** As {!build_field} for a name the caller knows is a token and a value it
    knows holds no control byte: the field's semantics and the count limit
    are still checked. *)

val build_end : t -> head_length:int -> status
(** [Complete] ({!head_length} is [head_length]) or [Error]. *)

val meth : t -> Meth.t
val meth_span : t -> Span.t
(** The method token as sent (for {!Meth.Other} methods). *)

val target : t -> Span.t
(** The request-target as sent: origin-form ([/a?b]), absolute-form,
    authority-form (CONNECT) or asterisk-form (OPTIONS). Use {!Target} to
    split and decode it. *)

val version : t -> Version.t

val header_count : t -> int

val header_name : t -> int -> Header_name.t
(** [header_name t i] is the known name of field [i] (in arrival order),
    or {!Header_name.Other}. {b Unchecked}: [i] must satisfy
    [0 <= i < header_count t], as do the indices given to the two
    accessors below; {!find} and friends only return such indices. *)

val header_name_span : t -> int -> Span.t
(** The field name exactly as sent. *)

val header_value : t -> int -> Span.t
(** The field value with leading and trailing whitespace (OWS) removed. *)

val find : t -> Header_name.t -> int
(** [find t n] is the index of the first field named [n], or [-1]. *)

val find_next : t -> Header_name.t -> after:int -> int
(** [find_next t n ~after] is the index of the next field named [n] after
    index [after], or [-1]: for fields that may repeat. *)

val find_string : t -> Bigstring.t -> string -> int
(** [find_string t buf name] is the index of the first field whose name
    equals [name] ignoring case, or [-1]; works for unknown names too. *)

val content_length : t -> int
(** The Content-Length, or [-1] when absent. *)

val is_chunked : t -> bool
(** The body is chunked (Transfer-Encoding ends in [chunked]). *)

val has_body : t -> bool
(** [is_chunked t || content_length t > 0]. *)

val keep_alive : t -> bool
(** The connection may carry another request after this one: HTTP/1.1
    unless [Connection: close]; HTTP/1.0 only with [Connection: keep-alive]
    (tokens matched case-insensitively in comma lists, RFC 9112 §9.3). *)

val expect_continue : t -> bool
(** [Expect: 100-continue] in an HTTP/1.1 request (RFC 9110 §10.1.1; it is
    ignored in HTTP/1.0 requests, as the RFC requires). *)

val host : t -> Span.t
(** The host the request is for: the Host value ({!Span.empty} when
    absent; see {!has_host}), or, for an absolute-form target, the
    target's authority, which wins over Host (RFC 9112 §3.2.2; HTTP/1.1
    still needs a Host field). *)

val has_host : t -> bool
(** A host is known: a Host field, or an absolute-form target's authority
    (an HTTP/1.0 request may have only the latter). *)

val has_upgrade : t -> bool
(** An [Upgrade] field is present (RFC 9110 §7.8). *)

val head_length : t -> int
(** Bytes from [off] to the end of the head's final CRLF, i.e. where the
    body (or the next pipelined request) starts. *)

val error : t -> Parse_error.t
(** Why the last {!parse} returned [Error]. *)
