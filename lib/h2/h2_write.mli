(** Writing HTTP/2 frames into a caller-owned buffer
    ({{:https://www.rfc-editor.org/rfc/rfc9113#section-6} RFC 9113 §6}).

    Every writer takes [buf ~off], writes at [off] and returns the offset
    just past what it wrote, as {!Response} does, so frames chain:
    {[
      let o = H2_write.settings buf ~off:0 ~ids ~values in
      let o = H2_write.window_update buf ~off:o ~stream_id:0 ~increment:1_000_000 in
      let o = H2_write.headers_header buf ~off:o ~stream_id:1 ~length:n
                ~end_stream:false ~end_headers:true in
      (* HPACK writes the n-byte field block at o; then DATA: *)
      let o = H2_write.data_header buf ~off:(o + n) ~stream_id:1 ~length:body
                ~end_stream:true in
      (* the body follows from its own buffer or file *)
    ]}
    Writers of a frame header alone ({!data_header}, {!headers_header},
    {!continuation_header}, {!frame_header}) leave the payload to the
    caller: a body can follow as a separate iovec or a [sendfile] range.
    Nothing is padded: padding is for senders hiding lengths, which a
    server writing its own responses does not need.

    {b All or nothing.} A writer writes its whole frame (or header) or
    raises before writing a byte:
    - {!No_space} when it does not fit in [\[off, length buf)];
    - {!Invalid_frame} when a field is outside what the wire can carry or
      the RFC allows: a stream identifier outside [\[0, 2{^31})] (or [0]
      where a stream is required), a length above 2{^24}-1, a window
      increment outside [\[1, 2{^31})], a setting outside 16/32 bits, a
      weight outside [\[1, 256\]].

    {b Allocation.} None, on success or refusal (constant exceptions
    raised with [raise_notrace]). The caller owns [buf]. *)

exception No_space
exception Invalid_frame

val frame_header :
  Bigstring.t -> off:int -> length:int -> type_code:int -> flags:int -> stream_id:int -> int
(** [frame_header buf ~off ~length ~type_code ~flags ~stream_id] writes the
    {!H2_frame.header_size} bytes of a frame header, for any type (use
    {!H2_frame.frame_type_to_int}); the reserved bit is written as 0.
    [type_code] and [flags] must fit in a byte. *)

val data_header : Bigstring.t -> off:int -> stream_id:int -> length:int -> end_stream:bool -> int
(** The header of a DATA frame of [length] bytes. [stream_id > 0]. *)

val headers_header :
  Bigstring.t -> off:int -> stream_id:int -> length:int -> end_stream:bool -> end_headers:bool -> int
(** The header of a HEADERS frame carrying a [length]-byte field block
    fragment, without priority fields. [stream_id > 0]. *)

val headers_header_unchecked : Bigstring.t -> off:int -> stream_id:int -> length:int -> end_stream:bool -> int
(** {!headers_header} with END_HEADERS, for a caller that checked what it
    would: [0 < stream_id <= 0x7FFFFFFF], [0 <= length <= 0xFFFFFF] and
    nine bytes of room at [off]. Nothing is checked (the one HEADERS
    frame of every response, where the queue's room and the peer's
    frame size were checked just before). *)

val continuation_header :
  Bigstring.t -> off:int -> stream_id:int -> length:int -> end_headers:bool -> int
(** The header of a CONTINUATION frame. [stream_id > 0]. *)

val settings : Bigstring.t -> off:int -> ids:int array -> values:int array -> int
(** [settings buf ~off ~ids ~values] writes a SETTINGS frame whose entries
    are [(ids.(i), values.(i))] in order (for instance
    [H2_settings.id_to_int Max_concurrent_streams], [100]). Values are not
    range-checked against {!H2_settings.check}: a test may need to send a
    bad one. Raises [Invalid_frame] when the arrays differ in length. *)

val settings_ack : Bigstring.t -> off:int -> int
(** The empty SETTINGS frame with ACK. *)

val ping : Bigstring.t -> off:int -> ack:bool -> Bigstring.t -> src_off:int -> int
(** [ping buf ~off ~ack src ~src_off] writes a PING carrying the 8 bytes
    of [src] at [src_off]: with [~ack:true] and the received frame's
    {!H2_frame.payload_off}, the answer RFC 9113 §6.7 requires. [src] may
    be [buf] if the ranges do not overlap.
    @raise Invalid_argument when the 8 bytes are not inside [src]. *)

val ping_int : Bigstring.t -> off:int -> ack:bool -> int -> int
(** [ping_int buf ~off ~ack n] writes a PING whose opaque data is [n]
    big-endian in 8 bytes (sign-extended), e.g. a counter or a clock. *)

val goaway :
  Bigstring.t -> off:int -> last_stream_id:int -> code:H2_error.t -> debug:string -> int
(** A GOAWAY frame; [debug] is the opaque debug data ([""] for none). *)

val rst_stream : Bigstring.t -> off:int -> stream_id:int -> code:H2_error.t -> int
(** A RST_STREAM frame. [stream_id > 0]. *)

val window_update : Bigstring.t -> off:int -> stream_id:int -> increment:int -> int
(** A WINDOW_UPDATE frame; [stream_id = 0] for the connection window. *)

val priority :
  Bigstring.t -> off:int -> stream_id:int -> exclusive:bool -> dependency:int -> weight:int -> int
(** A PRIORITY frame (RFC 7540 style, deprecated by RFC 9113 but still
    sent by some clients). [weight] is [1..256]. *)

val priority_update : Bigstring.t -> off:int -> prioritized_stream_id:int -> string -> int
(** [priority_update buf ~off ~prioritized_stream_id v] writes an RFC 9218
    PRIORITY_UPDATE frame carrying the Priority field value [v] (e.g.
    ["u=1, i"]; not validated). [prioritized_stream_id > 0]. *)
