(** Cookies: reading the [Cookie] request header and writing validated
    [Set-Cookie] fields (RFC 6265, with current browsers' [SameSite] rule).

    {b Reading} follows RFC 6265 §5.4's serialisation as browsers send it,
    leniently: pairs are separated by [';'] (with or without the space),
    spaces and tabs around names and values are dropped, a value wrapped
    in double quotes is unwrapped, and an element without ['='] is
    skipped. Values are handed over as they are (no percent-decoding:
    cookies have no escaping of their own). The cursor allocates nothing.

    {b Writing} refuses, with [Invalid_argument] naming the problem,
    anything that could split the header or smuggle an attribute: a name
    that is not a token, a value outside cookie-octets (no space, double
    quote, comma, semicolon, backslash or control byte; it may be wrapped
    in double quotes), a [Domain] or [Path] with [';'] or a control byte,
    [SameSite=None] without [Secure] (browsers drop such cookies), a
    negative [Max-Age]. *)

(** {1 Reading} *)

type t
(** A reusable cursor over the pairs of a [Cookie] value. *)

val create : unit -> t
val start : t -> Bigstring.t -> Span.t -> unit

val next : t -> bool
(** Moves to the next pair; [false] at the end. *)

val name : t -> Span.t
val value : t -> Span.t
(** The current pair's name and (unquoted) value, spans of the buffer. *)

val find : t -> Bigstring.t -> Span.t -> string -> bool
(** [find t buf s name] moves to the first pair named [name]
    (case-sensitive, as cookie names are); its value is then {!value}. *)

val find_in_request : t -> Bigstring.t -> Request.t -> string -> bool
(** {!find} over every [Cookie] field of a request, in order. *)

val get : Bigstring.t -> Request.t -> string -> string option
(** The value of the first cookie named [name] in the request's [Cookie]
    fields. Allocates the result. *)

val to_list : Bigstring.t -> Span.t -> (string * string) list
(** Every pair. Allocates. *)

(** {1 Writing} *)

type same_site = Strict | Lax | No_restriction  (** [SameSite=None] *)

val write :
  Bigstring.t ->
  off:int ->
  name:string ->
  value:string ->
  max_age:int ->
  expires:int ->
  domain:string ->
  path:string ->
  secure:bool ->
  http_only:bool ->
  same_site:same_site option ->
  int
(** [write buf ~off ~name ~value ...] writes the whole field line
    ["Set-Cookie: name=value; ...\r\n"] at [off] and is the position after
    it. [max_age = -1] and [expires < 0] (Unix time) leave those
    attributes out (a [max_age] below [-1] is refused: give [0] to delete
    a cookie), and so do [domain = ""] and [path = ""]. Does not allocate on
    success (pass [same_site] as a constant such as [Some Lax]: a literal
    is not allocated).
    @raise Invalid_argument when a part is refused (see above).
    @raise Response.No_space when the line does not fit. *)

val to_string :
  ?max_age:int ->
  ?expires:int ->
  ?domain:string ->
  ?path:string ->
  ?secure:bool ->
  ?http_only:bool ->
  ?same_site:same_site ->
  string ->
  string ->
  string
(** [to_string name value] is the field {e value} of {!write} (without
    ["Set-Cookie: "] and CRLF), for [Ctx.header_s c "Set-Cookie"].
    Allocates. *)
