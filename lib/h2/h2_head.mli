(** An HTTP/2 request head (or trailer section): the header block decoded
    by HPACK into a caller-visible field table, and checked against
    {{:https://www.rfc-editor.org/rfc/rfc9113#section-8.2} RFC 9113 §8.2}
    and {{:https://www.rfc-editor.org/rfc/rfc9113#section-8.3} §8.3}.

    One table per connection: HTTP/2 decodes one header block at a time, and
    {!H2_connection} reports each head before it decodes the next. The
    table is the HTTP/2 counterpart of {!Request}'s: regular fields in
    arrival order, each a {!Header_name.t} (or [Other]) with name and value
    spans, plus the pseudo-headers apart.

    {b Rules enforced} (a violation makes the request malformed, which is a
    stream error PROTOCOL_ERROR, §8.1.1): names lower case, without
    controls, SP, DEL or bytes above 0x7e, and no [':'] but a pseudo-header's
    first; values without NUL, CR, LF, nor leading or trailing SP/HTAB;
    pseudo-headers only [:method], [:scheme], [:path], [:authority], each at
    most once, all before the first regular field, none in trailers
    ([:status], [:protocol] and unknown ones refused); [:method] present;
    without CONNECT [:scheme] and a non-empty [:path] present; with CONNECT
    [:authority] present and neither [:scheme] nor [:path]; no
    connection-specific field ([connection], [keep-alive],
    [proxy-connection], [transfer-encoding], [upgrade]); [te] only
    ["trailers"]; [content-length] digits only, equal when repeated. The
    [priority] field (RFC 9218) is parsed into {!priority}.

    {b Ownership.} Spans point into the [out] buffer given to {!decode} (the
    connection's decode buffer) and stay valid until the next {!decode}.

    {b Allocation.} {!create} allocates the arrays; {!decode} and the
    accessors do not. *)

type t

val create : max_fields:int -> t
(** A table holding at most [max_fields] regular fields: a head with more
    is {!Too_many_fields}. Allocates. *)

type result =
  | Valid
  | Malformed  (** a §8.2/§8.3 rule: stream error PROTOCOL_ERROR; {!reason} *)
  | Too_many_fields  (** more than [max_fields]: stream error (REFUSED_STREAM) *)
  | Compression_error  (** HPACK failed: connection error COMPRESSION_ERROR *)

val decode :
  t -> Hpack_decoder.t -> Bigstring.t -> off:int -> len:int -> out:Bigstring.t -> trailers:bool -> result
(** [decode t d src ~off ~len ~out ~trailers] decodes the whole header block
    [src.{off .. off+len-1}] with [d] into [out], and checks it as a request
    head ([trailers = false]) or a trailer section. The whole block is
    always decoded, even after a rule is broken, so the HPACK state stays in
    step with the peer's.

    [decode] owns the marks ({!Hpack_decoder.mark_inserted}) of [d]'s
    dynamic table: on each entry a field inserts, it records which of the
    name and value checks passed (and whether the value holds a control
    byte), and later fields indexed from that entry skip those checks. A
    caller sharing [d] must not mark its entries otherwise. *)

val reason : t -> string
(** The rule a [Malformed] head broke, or the HPACK error's description. *)

val field_count : t -> int
(** Regular fields. *)

val cookies : t -> int
(** Cookie fields among them (a client may split one into crumbs, RFC
    9113 §8.2.3). *)

val cookie_bytes : t -> int
(** The bytes of their values. *)

val field_name : t -> int -> Header_name.t
val field_name_span : t -> int -> Span.t
val field_value : t -> int -> Span.t
(** Field [i], [0 <= i < field_count t] (unchecked). *)

val find : t -> Header_name.t -> int
(** The index of the first field with that name, or [-1]. *)

val meth : t -> Meth.t
val method_span : t -> Span.t
val scheme : t -> Span.t
val path : t -> Span.t
val authority : t -> Span.t
(** The pseudo-headers; {!Span.empty} when absent. *)

val has_authority : t -> bool

val content_length : t -> int
(** [-1] when absent. *)

val priority : t -> H2_priority.t
(** The [priority] field's value ({!H2_priority.default} when absent). *)

val values_plain : t -> bool
(** No field value of the head holds a control byte (not even HTAB); field
    names are always tokens. Such a head's fields can go to
    {!Request.build_field_checked}. *)
