(** Media types with parameters ([Content-Type]) and [Accept] negotiation
    (RFC 9110 §8.3.1, §12.5.1), read in place from a field value.

    {v
    media-type = type "/" subtype parameters
    parameters = *( OWS ";" OWS [ parameter ] )
    parameter  = parameter-name "=" parameter-value
    parameter-value = token / quoted-string
    v}

    Every function reads a span of a caller-owned bigstring (a field value,
    as {!Request} hands it over), allocates nothing and never raises on
    malformed bytes: a value whose [type/subtype] is not two tokens around
    a ['/'] followed by OWS, [';'] or the end matches no pattern and has no
    parameters; parameters are read left to right and reading stops at the
    first malformed one (those before it still count). Types, subtypes and
    parameter names compare ignoring ASCII case, as the RFC says they are.
    The only exception is [Invalid_argument] for a span outside its
    buffer (a caller's bug, not bad input). *)

val matches : Bigstring.t -> Span.t -> string -> bool
(** [matches buf v "application/json"]: the [type/subtype] of the field
    value [v] is that one, ignoring ASCII case, OWS and parameters
    (["Application/JSON; charset=utf-8"] matches). The pattern is compared
    literally: ["*"] is no wildcard here (see {!accepts} for ranges). *)

val is_type : Bigstring.t -> Span.t -> string -> bool
(** [is_type buf v "text"]: [v] is well-formed and its top-level type is
    that one (any subtype), ignoring case. *)

val has_suffix : Bigstring.t -> Span.t -> string -> bool
(** [has_suffix buf v "json"]: [v]'s subtype ends in ["+json"] (a structured
    syntax suffix, RFC 6838 §4.2.8), ignoring case. *)

val is_json : Bigstring.t -> Span.t -> bool
(** [application/json], [text/json] or any [+json] subtype
    ([application/problem+json], [application/vnd.api+json]): the WHATWG
    MIME Sniffing standard's "JSON MIME type". *)

val param : Bigstring.t -> Span.t -> string -> Span.t
(** [param buf v "charset"] is the value of the first parameter with that
    name (ignoring case) of a well-formed [v]: a token as it is, a
    quoted-string without its quotes (backslash escapes are left in; use
    {!Span.to_string} and unescape if a value may hold them). It is
    {!Span.empty} when there is no such parameter; {!param_present} tells
    an absent parameter from an empty quoted one ([charset=""]). *)

val param_present : Bigstring.t -> Span.t -> string -> bool
(** [param_present buf v name]: {!param} would find [name]. *)

(** {1 Content negotiation}

    [Accept = #( media-range [ weight ] )], where a media-range is
    [*/*], [type/*] or [type/subtype], each with parameters, and the weight
    is the parameter [q] ([q=0] to [q=1], up to three decimals). Parameters
    after [q] are extensions and ignored. A malformed element (including a
    malformed [q], or [*/subtype]) is skipped; the others still count. *)

val accepts : Bigstring.t -> Span.t -> string -> int
(** [accepts buf v "text/html"] is the weight, in thousandths ([0] to
    [1000]), that the [Accept] field value [v] gives the concrete media
    type [offered]. The most specific matching range decides (RFC 9110
    §12.5.1): [type/subtype] with parameters (the more the better; each of
    its parameters must be one of [offered]'s, same name and value, both
    ignoring case) before [type/subtype] before [type/*] before [*/*];
    among equally specific ranges the first wins. [0] when no range
    matches, or when the deciding range says [q=0] (a refusal: a less
    specific [*/*] does not override it). [offered] is [type/subtype]
    optionally followed by parameters, e.g. ["text/plain;format=flowed"];
    an [offered] without ['/'] gets [0].

    An empty [v] accepts nothing; a request {e without} an [Accept] field
    accepts everything, which the caller decides (see [Req.negotiate]). *)

val best : Bigstring.t -> Span.t -> string array -> int
(** [best buf v offered] is the index of the offered type with the highest
    {!accepts} weight, the earliest on a tie (list the server's preference
    first), or [-1] when every weight is [0] (answer 406, or ignore
    [Accept] and send the default: RFC 9110 allows both). *)

(** {1 In a request} *)

val accepts_request : Bigstring.t -> Request.t -> string -> int
(** [accepts_request buf req offered] is {!accepts} over every [Accept]
    field line of [req] (values in [buf]) taken as one list, so the most
    specific range of all of them decides; [1000] when [req] has no
    [Accept] field (RFC 9110 §12.5.1: any type is acceptable). *)

val best_request : Bigstring.t -> Request.t -> string array -> int
(** [best_request buf req offered] is {!best} by {!accepts_request}: [0]
    (the server's first choice) when [req] has no [Accept] field and
    [offered] is not empty. *)

val content_type : Bigstring.t -> Request.t -> Span.t
(** The value of the first [Content-Type] field, {!Span.empty} when there
    is none. *)

val request_is : Bigstring.t -> Request.t -> string -> bool
(** [request_is buf req "application/json"]: [req]'s first [Content-Type]
    {!matches} that type; [false] without one. *)

val request_is_json : Bigstring.t -> Request.t -> bool
(** [req]'s first [Content-Type] {!is_json}. *)
