(** SHA-1 (FIPS 180-4 §6.1), for the WebSocket opening handshake.

    RFC 6455 §4.2.2 derives [Sec-WebSocket-Accept] from the client's key
    with SHA-1, and OCaml's stdlib has only MD5. SHA-1 is broken for
    collision resistance; the handshake uses it only to prove that the
    server read the key, which it still does. Do not use it for anything
    that needs a secure hash.

    A context is caller-owned and reusable: {!create} allocates it once
    (the 80-word message schedule and a 64-byte block buffer); {!reset},
    the [feed_*] functions and {!finish} allocate nothing. *)

type t

val create : unit -> t
(** [create ()] is a context ready for a new message. *)

val reset : t -> unit
(** [reset t] starts a new message, forgetting what was fed. *)

val feed_bigstring : t -> Bigstring.t -> off:int -> len:int -> unit
(** [feed_bigstring t buf ~off ~len] appends those bytes to the message.
    @raise Invalid_argument when the range is outside [buf]. *)

val feed_string : t -> string -> off:int -> len:int -> unit
(** As {!feed_bigstring}, from a string.
    @raise Invalid_argument when the range is outside the string. *)

val finish : t -> Bigstring.t -> off:int -> unit
(** [finish t dst ~off] pads the message, writes its 20-byte digest at
    [dst.{off .. off+19}] and resets [t].
    @raise Invalid_argument when the 20 bytes do not fit. *)

val digest_length : int
(** [20]. *)

val digest_string : string -> string
(** [digest_string s] is the raw 20-byte digest of [s]. Allocates (a
    context and the result): for tests and one-off use. *)
