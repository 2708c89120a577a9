(** WebSocket frames (RFC 6455 §5.2): opcodes, masking, and writers.

    {v
  0                   1                   2                   3
  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 +-+-+-+-+-------+-+-------------+-------------------------------+
 |F|R|R|R| opcode|M| Payload len |    Extended payload length    |
 |I|S|S|S|  (4)  |A|     (7)     |             (16/64)           |
 |N|V|V|V|       |S|             |   (if payload len==126/127)   |
 | |1|2|3|       |K|             |                               |
 +-+-+-+-+-------+-+-------------+ - - - - - - - - - - - - - - - +
 |     Extended payload length continued, if payload len == 127  |
 + - - - - - - - - - - - - - - - +-------------------------------+
 |                               | Masking-key, if MASK set to 1 |
 +-------------------------------+-------------------------------+
 | Masking-key (continued)       |          Payload Data         |
 +-------------------------------- - - - - - - - - - - - - - - - +
    v}

    Reading frames is {!Ws_reader}'s job; this module has what reading
    and writing share. A masking key is an [int] holding the four key
    bytes in wire order ([b0 lsl 24 lor b1 lsl 16 lor b2 lsl 8 lor b3]).

    {b Allocation.} Nothing here allocates. Writers write into a
    caller-owned bigstring at an offset and return the offset after what
    they wrote; they check that it fits ([Invalid_argument] otherwise,
    which allocates only when raised). *)

type opcode =
  | Continuation  (** [0x0] *)
  | Text  (** [0x1] *)
  | Binary  (** [0x2] *)
  | Close  (** [0x8] *)
  | Ping  (** [0x9] *)
  | Pong  (** [0xA] *)
(** The opcodes RFC 6455 §11.8 defines. [0x3]-[0x7] and [0xB]-[0xF] are
    reserved: receiving one fails the connection (1002). *)

val opcode_to_int : opcode -> int

val is_known_opcode : int -> bool
(** [is_known_opcode n] is [true] for the six defined opcodes. *)

val opcode_of_int : int -> opcode
(** [opcode_of_int n] is the opcode numbered [n].
    @raise Invalid_argument when [not (is_known_opcode n)]. *)

val is_control : opcode -> bool
(** [Close], [Ping] and [Pong]: at most 125 bytes of payload, never
    fragmented (RFC 6455 §5.5). *)

val opcode_to_string : opcode -> string

val max_control_payload : int
(** [125]. *)

(** {1 Masking} *)

val unmask : Bigstring.t -> off:int -> len:int -> key:int -> phase:int -> unit
(** [unmask buf ~off ~len ~key ~phase] XORs [buf.{off .. off+len-1}] with
    the key in place, the first byte with key byte [phase] (0-3): a
    payload that arrives in pieces is unmasked piece by piece, each with
    [phase] = (payload bytes before it) mod 4. Eight bytes at a time,
    at any alignment. Masking and unmasking are the same operation.
    Unchecked: the range must lie inside [buf]. *)

(** {1 Writing} *)

val header_length : len:int -> masked:bool -> int
(** [header_length ~len ~masked] is the size of the header of a frame
    carrying [len] bytes: 2, 4 or 10, plus 4 when masked. *)

val write_header :
  Bigstring.t -> off:int -> fin:bool -> rsv1:bool -> opcode -> len:int -> int
(** [write_header buf ~off ~fin ~rsv1 op ~len] writes an unmasked (server)
    frame header for a payload of [len] bytes, with the shortest length
    encoding, and returns [off + header_length ~len ~masked:false]. [rsv1]
    marks a compressed message's first frame (RFC 7692); give [false]
    unless permessage-deflate was negotiated. The payload is the caller's
    to write after it.
    @raise Invalid_argument when [len < 0], when a control frame is given
    [len > 125] or [fin = false], or when the header does not fit. *)

val write_masked_header :
  Bigstring.t -> off:int -> fin:bool -> rsv1:bool -> opcode -> len:int -> key:int -> int
(** As {!write_header} for a client frame: MASK set and the key after the
    length. The caller masks the payload (e.g. with {!unmask}, phase 0). *)

val write_client_frame :
  Bigstring.t -> off:int -> fin:bool -> opcode -> key:int -> string -> int
(** [write_client_frame buf ~off ~fin op ~key payload] writes a whole
    masked frame (header, then the payload masked with [key]); for tests
    and clients. Same errors as {!write_masked_header}, and
    [Invalid_argument] when the payload does not fit. *)
