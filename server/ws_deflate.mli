(** permessage-deflate (RFC 7692) for one WebSocket connection ({!Ws}):
    inflates received messages and deflates sent ones with the parameters
    negotiated by {!Httpz.Ws_extension}, over raw deflate streams
    ({!Httpz_sys.Zstream}, zlib).

    {b Memory.} The server compresses every message alone: {!create}
    adds [server_no_context_takeover] to the answer
    ({!Httpz.Ws_extension.forgo_server_context}), and one compressor per
    window size serves every connection of the worker. The inflater is
    the connection's, created by its first compressed message and kept
    (~40 KiB: the client's context) unless [client_no_context_takeover]
    was negotiated, when it is freed after each message. Output buffers
    come from the pool given to {!create} (the worker's body pool) and
    are owned by [t] until {!trim} gives them back (after each message:
    an idle connection holds none). Inflating
    stops one byte past [max] (its buffer is at most twice that): a
    deflate bomb costs that much, then {!Too_big}.

    {b Ownership.} {!output_inflated} is valid until the next {!inflate},
    {!output_deflated} until the next {!deflate}. Everything here may
    allocate (buffers, on growth); the steady state reuses them. *)

type t

val create : Httpz.Ws_extension.t -> Buffer_pool.t -> t
(** [create ext pool] for the accepted offer [ext]. *)

val min_length : int
(** Messages shorter than this are sent uncompressed (RSV1 clear). *)

type inflated =
  | Inflated  (** the message is at [output_inflated t], [inflated_length t] bytes *)
  | Too_big  (** it inflates to more than [max] bytes: close with 1009 *)
  | Corrupt  (** not a valid deflate stream: close with 1007 *)

val inflate : t -> Httpz.Bigstring.t -> off:int -> len:int -> max:int -> inflated
(** [inflate t src ~off ~len ~max] inflates one whole compressed message
    (its frames' payloads, reassembled). *)

val output_inflated : t -> Httpz.Bigstring.t
val inflated_length : t -> int

val deflate : t -> Httpz.Bigstring.t -> off:int -> len:int -> unit
(** [deflate t src ~off ~len] compresses one message into
    [output_deflated t] (without the final [00 00 ff ff]).
    @raise Failure if zlib fails (a bug). *)

val deflate_string : t -> string -> unit
val output_deflated : t -> Httpz.Bigstring.t
val deflated_length : t -> int

val trim_deflated : t -> unit
(** Gives back the buffers of {!deflate} (the inflated message stays:
    a callback may send it to several connections). *)

val trim : t -> unit
(** Gives every output buffer back (their contents are invalid after). *)

val release : t -> unit
(** Frees the streams and gives every buffer back; [t] may be used again
    (streams are recreated). *)
