(** Incremental WebSocket frame reader (RFC 6455 §5, §6.2, §8.1): one per
    connection, fed the bytes of a read buffer as they arrive.

    The reader is a byte-exact state machine: a frame may be split at
    {e any} byte (inside the header, the masking key or the payload), and
    the next call resumes where the last stopped. It keeps, in its own
    fields, the current frame (opcode, FIN, key, bytes left), the current
    message (in progress, opcode, bytes so far, UTF-8 state of a text
    message) and the payload of a control frame.

    {[
      let r = Ws_reader.create ~max_message:(1 lsl 20) () in
      let rec loop off len =
        match Ws_reader.read r buf ~off ~len with
        | Data -> deliver buf (Ws_reader.data_off r) (Ws_reader.data_len r); next ()
        | Message_end -> finish (Ws_reader.message_opcode r); next ()
        | Control -> (* Ping / Pong / Close, payload in control_buffer r *) next ()
        | Need_more -> (* all len bytes used: read more *)
        | Closed -> (* a Close was already returned: stop reading *)
        | Error -> fail_with (Ws_reader.error_close_code (Ws_reader.error r))
      and next () = let k = Ws_reader.consumed r in loop (off + k) (len - k)
    ]}

    {b Data payloads} are delivered as spans of the caller's buffer,
    unmasked in place: the bytes at [data_off .. data_off + data_len) are
    overwritten with the payload. A message is a sequence of [Data]
    pieces (as many as frames and reads cut it into; a piece never spans
    two frames) ended by one [Message_end]. A text message is validated
    as it arrives ({!Utf8}): the piece holding the first invalid byte is
    not delivered, [Error] ({!Invalid_utf8}) is returned instead, and a
    text message ending inside a character fails at its last byte.

    {b Control payloads} (at most 125 bytes, possibly split across reads)
    are unmasked in place, then copied into the reader's own
    {!control_buffer}, so that [Control] always has the whole payload in
    one place. A Close payload is validated ({!Ws_close.check}) before it
    is reported.

    {b Protocol rules enforced}, each with the close code to fail with
    ({!error_close_code}): a server's reader refuses unmasked frames, a
    client's refuses masked ones (1002); RSV1-3 must be 0, except RSV1 on
    the first frame of a data message when permessage-deflate is on
    (1002); reserved opcodes (1002); control frames with more than 125
    bytes or without FIN (1002); a continuation frame with no message in
    progress, or a new data frame while one is (1002); lengths not in
    their shortest encoding and 64-bit lengths with the top bit set
    (1002); a message longer than [max_message] (1009), refused as soon as
    the frame header that would exceed it is read; invalid UTF-8 in a text
    message or a Close reason (1007); a Close payload of one byte or with
    an invalid code (1002).

    {b Minimal length encoding.} RFC 6455 §5.2 says the minimal number of
    bytes MUST be used for the length; a frame using 126 or 127 for a
    length that fits a shorter form is refused ({!Non_minimal_length}), as
    wsproto does: tolerating it buys no interoperability (no known client
    sends it) and gives two encodings to one frame.

    {b Fail fast.} Every header rule is checked on the byte that decides
    it (the opcode and RSV bits on the first byte, the mask bit on the
    second, a length when its last byte arrives), so an error is reported
    by the call that receives the offending byte, whatever the split.

    {b Compressed messages.} With [~deflate:true], a message whose first
    frame has RSV1 is compressed ({!message_compressed}): its payload is
    not UTF-8-checked here (the check belongs to the inflated bytes, which
    the caller validates with {!Utf8}), and [max_message] bounds its
    compressed size.

    {b Ownership.} The reader keeps no reference to the slices it is
    given. A [Data] span is valid while the caller leaves those bytes
    alone; {!control_buffer} until the next {!read}.

    {b Allocation.} {!create} allocates the state (two small buffers);
    {!read}, {!reset} and every accessor allocate nothing. *)

type role =
  | Server  (** reads a client's frames: they must be masked *)
  | Client  (** reads a server's frames: they must not be *)

type error =
  | Unmasked_frame  (** a server got an unmasked frame *)
  | Masked_frame  (** a client got a masked frame *)
  | Reserved_bits  (** RSV1-3 set without an extension that defines them *)
  | Reserved_opcode  (** opcode 0x3-0x7 or 0xB-0xF *)
  | Control_too_long  (** control payload over 125 bytes *)
  | Control_fragmented  (** control frame without FIN *)
  | Unexpected_continuation  (** continuation with no message in progress *)
  | Expected_continuation  (** new data frame inside a fragmented message *)
  | Non_minimal_length  (** 16- or 64-bit length that fits a shorter form *)
  | Length_top_bit  (** 64-bit length with its most significant bit set *)
  | Message_too_big  (** the message would exceed [max_message] *)
  | Invalid_utf8  (** a text message that is not UTF-8 *)
  | Bad_close_length  (** a one-byte Close payload *)
  | Bad_close_code  (** a Close code that may not be sent *)
  | Bad_close_reason  (** a Close reason that is not UTF-8 *)

val error_close_code : error -> int
(** The close code to fail the connection with: 1009 for
    {!Message_too_big}, 1007 for {!Invalid_utf8} and {!Bad_close_reason},
    1002 for the rest. *)

val error_to_string : error -> string
(** A stable snake_case name. Does not allocate. *)

type t

type status =
  | Data  (** [data_len t > 0] payload bytes of the current message at [data_off t] *)
  | Message_end  (** the current message is complete (and valid) *)
  | Control  (** a whole Ping, Pong or Close frame: {!control_opcode} *)
  | Need_more  (** all input consumed; nothing to report yet *)
  | Closed  (** a Close was reported earlier: nothing more is read *)
  | Error  (** the connection must be failed: {!error} *)

val default_max_message : int
(** 16 MiB. *)

val create : ?role:role -> ?deflate:bool -> ?max_message:int -> unit -> t
(** [create ()] is a reader for a server ([role] defaults to [Server])
    without extensions, with [max_message = default_max_message] bytes
    (payload of all the frames of one message).
    @raise Invalid_argument if [max_message < 0]. *)

val reset : t -> unit
(** [reset t] readies [t] for a new connection, keeping its settings. *)

val set_deflate : t -> bool -> unit
(** [set_deflate t on] allows RSV1 on first frames (permessage-deflate
    negotiated, RFC 7692 §6); survives {!reset}. *)

val set_max_message : t -> int -> unit
(** [set_max_message t n] changes the message size limit; [n < 0] means
    no limit. Survives {!reset}. *)

val read : t -> Bigstring.t -> off:int -> len:int -> status
(** [read t buf ~off ~len] reads [buf.{off .. off+len-1}] from where the
    last call stopped, and stops at the first thing to report.
    {!consumed} tells how many bytes it used: advance by that much and
    call again; [Need_more] means all [len] were used. [Message_end] and
    [Control] come right after the bytes that complete them (a frame's
    last payload byte, or its header for an empty one); bytes after them
    are not consumed. On [Error], [consumed t] is the offset in the slice
    of the byte that decided the error (for an unfinished UTF-8
    sequence at a message's end, its last byte), and every later call
    returns [Error]; after [Closed], nothing is consumed. Does not
    allocate.
    @raise Invalid_argument when the range is outside [buf]. *)

val consumed : t -> int
val data_off : t -> int
val data_len : t -> int

val message_opcode : t -> Ws_frame.opcode
(** [Text] or [Binary]: the opcode of the message the last [Data] or
    [Message_end] belongs to. *)

val message_bytes : t -> int
(** Payload bytes of the current message delivered so far (after
    [Message_end]: its length). *)

val message_compressed : t -> bool
(** The message's first frame had RSV1 (only possible with deflate on). *)

val frame_fin : t -> bool
(** The FIN bit of the frame being read (or just read). *)

val control_opcode : t -> Ws_frame.opcode
(** [Close], [Ping] or [Pong], after [Control]. *)

val control_buffer : t -> Bigstring.t
(** The reader's own 125-byte buffer: after [Control], the unmasked
    payload is at [0 .. control_length t - 1]. *)

val control_length : t -> int

val close_code : t -> int
(** After a [Control] for a Close: its code, or {!Ws_close.no_status}
    (1005) when it had no payload. *)

val close_reason_length : t -> int
(** Bytes of the Close reason, at offset 2 of {!control_buffer}. *)

val error : t -> error
(** Why [read] returned [Error]; meaningless otherwise. *)
