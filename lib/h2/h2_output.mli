(** The sending half of an HTTP/2 connection ({!H2_connection}): a queue of
    frames that are not flow-controlled, the response-head encoder, the
    connection's flow-control windows and the DATA scheduler.

    {b The queue.} SETTINGS, their ACKs, PING ACKs, WINDOW_UPDATE,
    RST_STREAM, GOAWAY and response HEADERS/CONTINUATION are written, whole,
    into [pending] (a buffer of [pending_size] bytes, taken from the
    workspace's pool by the first frame queued and given back once the
    queue empties: an idle connection holds none) in the order they are
    queued, and go out before any DATA. The last {!goaway_reserve} bytes are
    kept for a GOAWAY, so a connection that must fail can always say why. A
    peer that makes us queue frames without reading them (a PING flood with
    a closed receive window) fills it: the pushers then answer [false] and
    the connection ends with ENHANCE_YOUR_CALM.

    {b Flow control.} [conn_send_window] is what the peer lets us send on
    the connection; [conn_recv_window] what we let it send. Receive credit
    comes back ({!credit_connection}, {!credit_stream}) when the
    application consumes bytes; a WINDOW_UPDATE is queued once half the
    window is owed, so a fast sender always has half a window in flight.

    {b The scheduler} ({!next}): RFC 9218 urgency 0 first; within one
    urgency, non-incremental responses one after another in stream-id
    order, then incremental ones round-robin, one DATA frame per turn.
    A frame never exceeds the stream's and the connection's send windows
    nor the peer's SETTINGS_MAX_FRAME_SIZE; a stream with a window of 0
    waits.

    Fields are read and written by {!H2_connection}'s modules only.

    {b Allocation.} {!create} allocates; nothing else does (the encoder's
    exceptions are constant). *)

type t = {
  streams : H2_stream.t;
  ws : H2_workspace.t;
  mutable pending : Bigstring.t;  (** from [ws.queues] while frames wait, else {!H2_workspace.none} *)
  mutable p_start : int;  (** first unsent byte of [pending] *)
  mutable p_end : int;
  encoder : Hpack_encoder.t;
  mirror : Hpack_mirror.t;  (** the peer's table, as prepared sets filled it *)
  block : Bigstring.t;  (** the response head being built: [ws.response_block], shared *)
  mutable block_len : int;
  mutable peer_max_frame : int;
  mutable conn_send_window : int;
  mutable conn_recv_window : int;
  mutable conn_recv_unacked : int;
  conn_window_target : int;
  stream_window : int;
  cursor : int array;  (** per urgency: the incremental slot served last *)
  mutable order : int array;  (** the next streams to serve, within one [next]: see the .ml *)
  mutable order_len : int;
  mutable order_pos : int;
  mutable ext_stream : int;
  mutable ext_len : int;
  mutable ext_off : int;
  mutable ext_buf : Bigstring.t;  (** the external payload's buffer, for a stable piece *)
}

val goaway_reserve : int

val create : streams:H2_stream.t -> ws:H2_workspace.t -> conn_window:int -> stream_window:int -> t

val release : t -> unit
(** Empties the queue and gives its buffer back to [ws.queues]. *)

val reset : t -> unit
val pending_length : t -> int

(** {1 Queueing} Each pusher writes its whole frame and answers [true], or
    writes nothing and answers [false] when the queue is full. *)

val push_settings : t -> ids:int array -> values:int array -> bool
val push_settings_ack : t -> bool
val push_ping_ack : t -> Bigstring.t -> src_off:int -> bool
val push_window_update : t -> stream_id:int -> increment:int -> bool
val push_rst_stream : t -> stream_id:int -> code:H2_error.t -> bool

val push_goaway : t -> last_stream_id:int -> code:H2_error.t -> debug:string -> unit
(** Uses the reserve; [debug] is dropped when longer than it. *)

(** {1 Receive windows} *)

val credit_connection : t -> int -> unit
val credit_stream : t -> int -> int -> unit
(** [credit_stream t slot n]; no WINDOW_UPDATE for a stream whose peer has
    ended it. *)

val close_stream : t -> int -> unit
(** Frees the slot and credits the connection with the bytes the
    application was handed and will never consume. *)

val end_stream_sent : t -> int -> unit
(** Our END_STREAM is queued: half-closed (local), or closed. *)

(** {1 Response heads} The encoder's exceptions
    ({!Hpack_encoder.No_space} when the head outgrows the block buffer,
    {!Hpack_encoder.Invalid_field}) pass through. *)

val start_headers : t -> status:int -> unit
val header : t -> Header_name.t -> string -> unit
val header_int : t -> Header_name.t -> int -> unit
val header_s : t -> string -> string -> unit
val header_span : t -> Header_name.t -> Bigstring.t -> Span.t -> unit
val header_s_span : t -> string -> Bigstring.t -> Span.t -> unit
val header_checked : t -> Header_name.t -> Bigstring.t -> off:int -> len:int -> unit
(** A field whose value is already checked ({!Hpack_encoder.field_checked}). *)

val header_prepared : t -> Prepared_fields.t -> unit
(** A prepared set, through the mirror of the peer's table ({!Hpack_mirror.block}). *)

val header_encoded : t -> Bigstring.t -> off:int -> len:int -> unit
(** Bytes already HPACK-encoded (by an encoder in the same state: literals
    without indexing are), appended to the block as they are. *)

val frame_headers : t -> stream_id:int -> end_stream:bool -> bool
(** Queues the built head as HEADERS + CONTINUATIONs of at most the peer's
    SETTINGS_MAX_FRAME_SIZE; [false] when the queue cannot take it. *)

(** {1 Output} *)

val ready : t -> int -> bool
(** [ready t slot]: the slot has a DATA frame that the windows let go now. *)

val next : t -> Bigstring.t -> off:int -> len:int -> inline:bool -> int
(** [next t out ~off ~len ~inline] copies queued frames, then DATA frames picked by
    the scheduler, into [out], and is the byte count written. When a frame
    carries an external body it stops after that frame's header and sets
    [ext_stream], [ext_len] (the payload bytes the caller must send next)
    and [ext_off] (their offset in the stream's external body). With
    [inline], that frame's payload is also bounded by the room left in
    [out] after its header, so the caller can put the bytes right after
    it. *)
