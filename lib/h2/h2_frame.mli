(** HTTP/2 frames: types, flags, the connection preface and an incremental
    frame reader
    ({{:https://www.rfc-editor.org/rfc/rfc9113#section-4} RFC 9113 §4},
    {{:https://www.rfc-editor.org/rfc/rfc9113#section-6} §6}, and the
    PRIORITY_UPDATE frame of
    {{:https://www.rfc-editor.org/rfc/rfc9218#section-7.1} RFC 9218 §7.1}).
    Writers are in {!H2_write}.

    {v
  +-----------------------------------------------+
  |                 Length (24)                   |
  +---------------+---------------+---------------+
  |   Type (8)    |   Flags (8)   |
  +-+-------------+---------------+-------------------------------+
  |R|                 Stream Identifier (31)                      |
  +=+=============================================================+
  |                   Frame Payload (0...)                      ...
  +---------------------------------------------------------------+
    v}

    {b Reading.} A session keeps one {!t} per connection and calls {!read}
    on the unread bytes of its buffer, over and over:
    {[
      match H2_frame.read r buf ~off ~len with
      | Frame -> handle r buf; off := !off + H2_frame.consumed r
      | Partial -> (* read more; H2_frame.needed r bytes make the frame *)
      | Stream_error -> (* RST_STREAM (stream_id r) (error r); skip consumed r *)
      | Connection_error -> (* GOAWAY (error r), then close *)
    ]}
    A frame is returned only once all of it is in the slice, so every span
    points into the caller's buffer: a connection needs room for
    {!header_size} + its advertised SETTINGS_MAX_FRAME_SIZE bytes. A call
    depends on nothing but the bytes it is given and {!set_max_frame_size}:
    the reader keeps no state between calls, so a frame that arrives a byte
    at a time gives the same answer as one that arrives whole. A connection
    error that the 9 header bytes settle (a length above the limit, a type
    on the wrong kind of stream, a length the type forbids) is reported as
    soon as they are in, before any payload is buffered; a stream error
    waits for the whole frame, so that {!consumed} can step over it.

    {b Errors.} [Connection_error] and [Stream_error] carry the code RFC
    9113 requires ({!error}) and a constant explanation ({!reason}, fit for
    a GOAWAY's debug data). The checks run in a fixed order: length against
    SETTINGS_MAX_FRAME_SIZE (always a connection error here, which RFC 9113
    §4.2 permits: a larger frame would not fit the buffer), then the stream
    identifier, then the length the type requires, then the payload.
    What the reader cannot know — stream states, whether a CONTINUATION
    continues the right header block, a PUSH_PROMISE sent to a server — is
    the session's to check.

    {b Ownership.} The reader keeps no reference to the buffer. Spans
    ({!payload_off}, {!payload_len}) and entry accessors refer to the
    buffer given to the last {!read} and stay valid while the caller leaves
    those bytes alone.

    {b Allocation.} {!read}, {!check_preface} and every accessor allocate
    nothing; {!create} allocates the state once. *)

(** {1 Frame types} *)

type frame_type =
  | Data  (** [0x0] *)
  | Headers  (** [0x1] *)
  | Priority  (** [0x2] deprecated RFC 7540 priorities; still validated *)
  | Rst_stream  (** [0x3] *)
  | Settings  (** [0x4] *)
  | Push_promise  (** [0x5] *)
  | Ping  (** [0x6] *)
  | Goaway  (** [0x7] *)
  | Window_update  (** [0x8] *)
  | Continuation  (** [0x9] *)
  | Priority_update  (** [0x10] RFC 9218 *)
  | Unknown  (** any other type: an extension, to be ignored (RFC 9113 §5.5) *)

val frame_type_of_int : int -> frame_type
val frame_type_to_int : frame_type -> int
(** [frame_type_to_int t] is the wire type; [-1] for [Unknown]. *)

val frame_type_to_string : frame_type -> string
(** ["DATA"], ["HEADERS"], …, ["PRIORITY_UPDATE"], ["UNKNOWN"]. *)

(** {1 Flags} Bits of the flags byte; test with [flags land bit <> 0].
    Bits a frame type does not define are ignored on receipt. *)

val flag_end_stream : int  (** [0x1] on DATA and HEADERS *)

val flag_ack : int  (** [0x1] on SETTINGS and PING *)

val flag_end_headers : int  (** [0x4] on HEADERS, PUSH_PROMISE, CONTINUATION *)

val flag_padded : int  (** [0x8] on DATA, HEADERS, PUSH_PROMISE *)

val flag_priority : int  (** [0x20] on HEADERS *)

val header_size : int
(** [9]: bytes of a frame header (24-bit length, type, flags, R bit and
    31-bit stream identifier). A frame is [header_size + length] bytes. *)

(** {1 Connection preface (RFC 9113 §3.4)} *)

val preface : string
(** ["PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"], the 24 bytes a client sends
    first. *)

type preface_check =
  | Preface  (** the slice starts with the whole preface *)
  | Not_preface  (** some byte differs: not HTTP/2 with prior knowledge *)
  | Need_more  (** the slice is a proper prefix of the preface *)

val check_preface : Bigstring.t -> off:int -> len:int -> preface_check
(** [check_preface buf ~off ~len] says whether [buf.{off .. off+len-1}]
    begins with {!preface}. It answers [Not_preface] at the first byte that
    differs, so an HTTP/1.1 request is told apart from h2c with prior
    knowledge after 1 or 2 bytes (["G"], ["PO"], ["PU"], ["PA"], …); only
    a request with the method [PRI], which RFC 9113 §3.4 keeps for the
    preface, is read up to its version. Reads at most 24 bytes.
    @raise Invalid_argument when the slice is not inside [buf]. *)

(** {1 Reading frames} *)

type t
(** Caller-owned reader state: the limit it enforces and what the last
    {!read} found. *)

type result =
  | Frame  (** a whole, valid frame: read its fields; {!consumed} bytes *)
  | Partial  (** fewer than {!needed} bytes in the slice, nothing wrong yet *)
  | Stream_error
      (** the frame (whole, {!consumed} bytes) breaks a rule that only
          ends its stream: reset {!stream_id} with {!error} and go on *)
  | Connection_error
      (** a rule whose breach ends the connection: send GOAWAY with
          {!error} and close; {!consumed} is [0] *)

val create : ?max_frame_size:int -> unit -> t
(** [create ()] is a reader enforcing [max_frame_size] (default 16384),
    the SETTINGS_MAX_FRAME_SIZE this endpoint advertised. Allocates.
    @raise Invalid_argument when it is outside [\[16384, 2{^24}-1\]]. *)

val set_max_frame_size : t -> int -> unit
(** [set_max_frame_size t n] changes the limit, once the peer has
    acknowledged the SETTINGS that announced it.
    @raise Invalid_argument when it is outside [\[16384, 2{^24}-1\]]. *)

val max_frame_size : t -> int

val read : t -> Bigstring.t -> off:int -> len:int -> result
(** [read t buf ~off ~len] reads the frame that starts at [off] from the
    slice [buf.{off .. off+len-1}]. Bytes past the frame are left alone
    (the next frame). Does not allocate.
    @raise Invalid_argument when the slice is not inside [buf]. *)

val consumed : t -> int
(** [header_size + length] after [Frame] or [Stream_error]; [0] after
    [Partial] or [Connection_error]. *)

val needed : t -> int
(** Bytes the current frame needs in all: [9] until its header is in,
    [header_size + length] after. Meaningful after [Partial] (and after
    every result once the header has been read). *)

(** {2 The frame header} Set by every [read] that saw 9 bytes. *)

val length : t -> int
(** Payload bytes, padding included: what a DATA frame costs in the
    flow-control windows (RFC 9113 §6.9.1). *)

val frame_type : t -> frame_type
val type_code : t -> int  (** the wire type, also for [Unknown] *)

val flags : t -> int
(** The raw flags byte, undefined bits included. *)

val stream_id : t -> int
(** The 31-bit stream identifier; the reserved bit is dropped. *)

val has_flag : t -> int -> bool
(** [has_flag t bit] is [flags t land bit <> 0]. *)

(** {2 The error} *)

val error : t -> H2_error.t
(** The code of the last [Stream_error] or [Connection_error]. *)

val reason : t -> string
(** A constant phrase naming the broken rule (["PING length is not 8"]),
    for logs and GOAWAY debug data. Not allocated. *)

(** {2 The payload} *)

val payload_off : t -> int
(** Where the frame's content starts in the buffer: after the pad length,
    priority fields or promised stream id for DATA, HEADERS, PUSH_PROMISE;
    the opaque data for PING; the debug data for GOAWAY; the field value
    for PRIORITY_UPDATE; the entries for SETTINGS; the whole payload for
    CONTINUATION, the other types and [Unknown]. *)

val payload_len : t -> int
(** Its length, padding excluded: the data of a DATA frame, the field
    block fragment of HEADERS, PUSH_PROMISE and CONTINUATION. *)

val pad_length : t -> int
(** The Pad Length field of a PADDED frame, else [0]. *)

(** {2 Fields of particular types} *)

val priority_exclusive : t -> bool
val priority_dependency : t -> int
val priority_weight : t -> int
(** The fields of a PRIORITY frame, and of a HEADERS frame with
    {!flag_priority}; the weight is [1..256] (the byte plus one). Without
    priority information: [false], [0], [16] (the RFC 7540 defaults). A
    stream made to depend on itself is a [Stream_error] with
    [Protocol_error] (RFC 9113 §5.3.1); on HEADERS the field block is
    still exposed, to be decoded to keep HPACK in step. *)

val promised_stream_id : t -> int  (** PUSH_PROMISE *)

val last_stream_id : t -> int  (** GOAWAY *)

val prioritized_stream_id : t -> int  (** PRIORITY_UPDATE; never [0] *)

val error_code_raw : t -> int
(** The error code of RST_STREAM or GOAWAY as sent, known or not (see
    {!H2_error.of_int}). *)

val window_increment : t -> int
(** WINDOW_UPDATE: [1 .. 2{^31}-1]. *)

(** {2 SETTINGS entries}
    A SETTINGS frame is only returned once every entry has passed
    {!H2_settings.check}; read them in order (a later entry for the same
    identifier overrides an earlier one). *)

val settings_count : t -> int
(** [length t / 6]. *)

val setting_code : Bigstring.t -> t -> int -> int
(** [setting_code buf t i] is the 16-bit identifier of entry [i]
    ([0 <= i < settings_count t], unchecked). *)

val setting_id : Bigstring.t -> t -> int -> H2_settings.id
val setting_value : Bigstring.t -> t -> int -> int
(** The identifier and the 32-bit value of entry [i]. *)

(** {2 Reading integers} Big-endian, unchecked, allocation-free: for
    callers that look at payload bytes themselves. *)

val get_u16 : Bigstring.t -> int -> int
val get_u24 : Bigstring.t -> int -> int
val get_u32 : Bigstring.t -> int -> int
val get_u31 : Bigstring.t -> int -> int  (** the top bit dropped *)
