(** Negotiation of permessage-deflate (RFC 7692) from a request's
    [Sec-WebSocket-Extensions] offers.

    {v
  Sec-WebSocket-Extensions = extension *( "," extension )
  extension       = extension-token *( ";" extension-param )
  extension-param = token [ "=" ( token / quoted-string ) ]
    v}

    Only the negotiation is here: compressing needs zlib, which [lib/]
    does not depend on. The caller-owned {!t} receives the parameters of
    the first acceptable offer (offers may span several field lines; they
    are taken in order). An offer of permessage-deflate is declined, and
    the next considered, when (§7) it has a parameter not defined for an
    offer, a parameter twice, [server_max_window_bits] without a value or
    with a value outside 8-15, a [client_max_window_bits] value outside
    8-15, or a value on [*_no_context_takeover]. Values are decimals
    without leading zeros ([8] to [15]), as a token or a quoted-string.

    The answer mirrors the accepted offer (§7.1): [server_no_context_takeover]
    and [server_max_window_bits] are echoed (the server must then honour
    them), [client_no_context_takeover] is echoed, and a valued
    [client_max_window_bits] is echoed; a valueless one is left out, so the
    client keeps its 15-bit window.

    {b Allocation.} None: {!negotiate} reads spans of the request's buffer
    and writes the caller's [t]. *)

type t

val create : unit -> t
(** [create ()] is a negotiation result with nothing accepted. Allocates
    (once per connection, or once per worker). *)

type result =
  | Accepted  (** an offer was accepted: read the parameters below *)
  | Not_offered  (** no permessage-deflate offer *)
  | Declined  (** permessage-deflate offered, but no offer is acceptable *)
  | Malformed  (** a field does not follow the grammar above; nothing accepted *)

val negotiate : t -> Request.t -> Bigstring.t -> result
(** [negotiate t req buf] resets [t], then reads the offers of the request
    [req] parsed from [buf]. On [Accepted], turn RSV1 on in the reader
    ({!Ws_reader.set_deflate}) and add {!write_response_field} to the
    answer. Unknown extensions are skipped. *)

val accepted : t -> bool

val server_no_context_takeover : t -> bool
(** The server must reset its compression context after each message. *)

val forgo_server_context : t -> unit
(** [forgo_server_context t], after [Accepted]: the server will reset its
    compression context after every message whether or not the client
    asked; {!server_no_context_takeover} becomes [true] and
    {!write_response_field} says so (RFC 7692 §7.1.1.1 lets a server add
    the parameter to its answer). A server that does so keeps no
    compressor per connection. No-op when nothing was accepted. *)

val client_no_context_takeover : t -> bool
(** The client will reset its context: the server may reset its
    decompression context after each message. *)

val server_max_window_bits : t -> int
(** The window the server must compress with at most: the offered value,
    else 15. *)

val client_max_window_bits : t -> int
(** The window the client compresses with: the offered value, else 15. *)

val write_response_field : t -> Bigstring.t -> off:int -> int
(** [write_response_field t buf ~off] writes
    ["Sec-WebSocket-Extensions: permessage-deflate[; params]\r\n"] for the
    accepted offer and returns the offset after it (at most 156 bytes);
    writes nothing when nothing was accepted.
    @raise Invalid_argument when it does not fit. *)
