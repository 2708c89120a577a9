(** The pure parts of the WebSocket opening handshake (RFC 6455 §4.2).

    {!check} decides whether a parsed request ({!Request.t}) is a valid
    upgrade; {!write_accept} and {!write_response_head} compute and write
    the [101 Switching Protocols] answer. Extension negotiation is in
    {!Ws_extension}.

    {b Allocation.} {!check}, {!key}, {!write_accept} and
    {!write_response_head} allocate nothing ({!write_accept} hashes with a
    caller-owned {!Sha1.t}), nor does {!check_origin}; {!accept_of_key}
    allocates (for tests). The
    spans read are those of the request's buffer, valid as {!Request}
    says. *)

type verdict =
  | Valid  (** answer 101 *)
  | Not_get  (** the method is not GET: 400 *)
  | Not_http_1_1  (** HTTP/1.0: 400 *)
  | No_upgrade_websocket  (** no [Upgrade] field with the [websocket] token: 400 *)
  | No_connection_upgrade  (** no [Connection] field with the [upgrade] token: 400 *)
  | No_version  (** no [Sec-WebSocket-Version]: 400 *)
  | Unsupported_version
      (** a [Sec-WebSocket-Version] other than [13]: 426, with
          [Sec-WebSocket-Version: 13] in the answer (§4.4) *)
  | No_key  (** no [Sec-WebSocket-Key]: 400 *)
  | Bad_key
      (** a key that is not 24 base64 characters decoding to 16 bytes, or
          more than one key field (§11.3.1): 400 *)
  | Cross_origin
      (** refused by {!check_origin}: 403 (never returned by {!check}) *)

val check : Request.t -> Bigstring.t -> verdict
(** [check req buf] checks, in the order of the constructors, the request
    [req] parsed from [buf]. Tokens ([websocket], [upgrade]) are matched
    ignoring ASCII case, as elements of comma-separated lists, over every
    line of the field. The key's base64 is checked for its alphabet, its
    length (22 characters and ["=="]); the unused low bits of its last
    character are not required to be zero (every key a client generates
    has them zero, and a decoder ignores them). *)

val status : verdict -> int
(** [101] for [Valid], [426] for [Unsupported_version], [403] for
    [Cross_origin], [400] otherwise. *)

val verdict_to_string : verdict -> string

val key : Request.t -> Bigstring.t -> Span.t
(** [key req buf] is the value of the first [Sec-WebSocket-Key] field, or
    {!Span.empty}. *)

val accept_length : int
(** [28]: the length of a [Sec-WebSocket-Accept] value. *)

val write_accept : Sha1.t -> Bigstring.t -> key:Span.t -> Bigstring.t -> off:int -> int
(** [write_accept sha src ~key dst ~off] writes at [dst.{off}] the 28
    characters of base64(SHA-1(key ^ "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
    for the key span [key] of [src] (§4.2.2 step 5.4), and returns
    [off + 28]. [sha] is used as scratch and left reset.
    @raise Invalid_argument when a range is out of its buffer. *)

val write_response_head : Sha1.t -> Bigstring.t -> key:Span.t -> Bigstring.t -> off:int -> int
(** [write_response_head sha src ~key dst ~off] writes
    ["HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n
    Connection: Upgrade\r\nSec-WebSocket-Accept: <accept>\r\n"] and
    returns the offset after it: the caller adds any further fields (e.g.
    {!Ws_extension.write_response_field}) and the final CRLF.
    @raise Invalid_argument when it does not fit. *)

val accept_of_key : string -> string
(** [accept_of_key k] is the [Sec-WebSocket-Accept] value for the key [k].
    Allocates. *)

(** {1 Origins}

    A browser sends the session's cookies with a WebSocket upgrade from
    any site, and the same-origin policy does not apply to WebSockets: a
    server that trusts the cookie must look at [Origin] itself, or any
    page can talk to it as the user (cross-site WebSocket hijacking). *)

type origins
(** Which origins may open a WebSocket. Built once (configuration time):
    {!check_origin} allocates nothing. *)

val same_origin : origins
(** The default, as gorilla/websocket's: a request without [Origin] (not
    a browser) passes; one with an [Origin] whose host (and port) equals
    the [Host] field, ignoring ASCII case, passes (the scheme is not
    compared, as a TLS-terminating proxy would hide it); any other
    ([null], another site, two [Origin] fields) is [Cross_origin], and so
    is every request with [Sec-Fetch-Site: cross-site]. Over HTTP/2 the
    [Host] compared is [:authority] (as {!Request} presents it). *)

val allow_origins : string list -> origins
(** [allow_origins l]: {!same_origin}, and also any request whose
    [Origin] is one of [l] (["https://app.example.com"]: scheme, host,
    port when not the default; compared whole, ignoring ASCII case),
    whatever its [Sec-Fetch-Site]. *)

val any_origin : origins
(** No check: for a WebSocket that trusts nothing the browser sends on
    its own (no cookie, no HTTP authentication, no client address). *)

val check_origin : origins -> Request.t -> Bigstring.t -> verdict
(** [check_origin policy req buf] is [Valid] or [Cross_origin]. *)

(** {1 Helpers shared with {!Ws_extension}} *)

val find_field : Request.t -> Bigstring.t -> string -> after:int -> int
(** [find_field req buf name ~after] is the index of the next field after
    index [after] (give [-1] to start) whose name equals the lower-case
    [name] ignoring case, or [-1]. For names {!Header_name} does not know. *)
