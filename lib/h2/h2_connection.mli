(** An HTTP/2 server connection as a state machine, without I/O
    ({{:https://www.rfc-editor.org/rfc/rfc9113} RFC 9113}, with RFC 9218
    priorities).

    {b Driving it.} A server loop owns the socket, the buffers and the
    clock; it tells the connection what arrived and asks it what to send:
    {[
      let c = H2_connection.create () in
      (* bytes arrived in rbuf.{off .. off+len-1}: *)
      let rec drain off len =
        match H2_connection.received c rbuf ~off ~len ~now:(clock_ms ()) with
        | Need_more -> keep (off + consumed_bytes c) (len - consumed_bytes c)
        | Headers -> start_exchange (event_stream c) (head c) (head_buffer c); again ()
        | Data -> body (event_stream c) rbuf (event_data_off c) (event_data_len c); again ()
        | Trailers | Reset | Goaway -> ...; again ()
        | Connection_error -> flush_then_close ()
      and again () = drain (off + consumed_bytes c) (len - consumed_bytes c) in
      ...
      (* the socket can take bytes: *)
      let n = H2_connection.next_output c wbuf ~off:0 ~len:(length wbuf) in
      (* write wbuf.{0..n-1}; then, if output_external_len c > 0, that many
         bytes of stream output_external_stream c's body, from offset
         output_external_offset c (pread/sendfile) *)
    ]}

    {b Events} are constant constructors, one per {!received} call; the
    call stops at the frame that causes one, and {!consumed_bytes} says
    how many bytes it used (frames that need no attention — SETTINGS, PING,
    WINDOW_UPDATE, PRIORITY — are handled inside the call). The caller
    keeps the unconsumed bytes (a partial frame) and calls again with more
    appended; since a frame is only read whole, the read buffer needs room
    for one frame of 16384 + 9 bytes plus the preface. Details are read
    with the [event_*] accessors until the next {!received}.

    {b Ownership.} A [Data] span is in the caller's buffer (valid while the
    caller leaves those bytes alone). A [Headers] or [Trailers] head is
    {!head}, whose spans point into {!head_buffer}, both the workspace's
    (shared by the worker's connections) and overwritten by the next header
    block of any of them: copy what must outlive the next {!received}. A body given to {!send_data} must stay unchanged
    until {!body_pending} is 0.

    {b Time.} [~now] is any monotonic tick count (ms is the intended unit):
    abuse counters (rapid reset, SETTINGS, PING, empty DATA, WINDOW_UPDATE,
    refused streams) count per [config.window_ms] ticks; over a limit the
    connection ends with GOAWAY ENHANCE_YOUR_CALM. Timers (SETTINGS ACK
    timeout, idle, slow readers) are the caller's.

    {b Errors.} Stream errors queue RST_STREAM and, when the application
    knew the stream, answer [Reset]. Connection errors queue GOAWAY(last
    stream id we processed, code, reason) and answer [Connection_error];
    every later call answers it again, {!next_output} then only drains the
    queue (ending with the GOAWAY), and {!finished} tells when to close.

    {b Rules} (RFC 9113 unless said): the preface then SETTINGS first
    (§3.4); HEADERS + CONTINUATION assembled, nothing else between (§6.10),
    capped at [max_header_list_size] bytes and [max_continuations] frames;
    heads checked by {!H2_head} (§8.2, §8.3); streams per §5.1: HEADERS on
    an even id is PROTOCOL_ERROR, on a lower id no longer open
    STREAM_CLOSED (both connection errors: the id alone cannot tell a
    closed stream from a skipped one, and §5.1 names STREAM_CLOSED for
    closed ones); DATA, WINDOW_UPDATE, RST_STREAM on idle streams are
    PROTOCOL_ERROR; DATA on a closed or half-closed (remote) stream is a
    stream error STREAM_CLOSED; a new stream beyond
    SETTINGS_MAX_CONCURRENT_STREAMS is refused (REFUSED_STREAM); after our
    GOAWAY, frames of streams above its last id are ignored (§6.8).
    Content-length is checked against the DATA (§8.1.1). Flow control per
    §6.9: DATA beyond the connection window is a connection error, beyond
    a stream's a stream error (FLOW_CONTROL_ERROR); padding is credited at
    once; a peer's INITIAL_WINDOW_SIZE change moves every open stream's
    send window, and a window pushed past 2{^31}-1 is FLOW_CONTROL_ERROR
    (connection-wide for SETTINGS and stream 0). PRIORITY frames are read
    and ignored; urgency comes from the [priority] field and
    PRIORITY_UPDATE (RFC 9218). PUSH_PROMISE from a client is
    PROTOCOL_ERROR. HPACK errors (the bomb limit included) are
    COMPRESSION_ERROR, and a refused or malformed head is still decoded, so
    the dynamic table stays in step.

    {b Memory.} A connection owns its HPACK tables, a few stream slots
    and its counters. The decoded head, the response head being encoded
    and scratch space are the {!H2_workspace}'s, shared by the worker's
    connections; the frame queue and a CONTINUATION block's assembly buffer
    come from the workspace's pools only while they hold bytes. So an idle
    connection holds no buffer beyond its HPACK decoder table.

    {b Allocation.} {!create} allocates; the stream table grows (doubling,
    up to [max_concurrent_streams]) when a new peak of concurrent streams
    opens, and a pool allocates a buffer when it has none to give; in
    steady state {!received}, {!next_output}, the response writers and
    every accessor allocate nothing. *)

type t

val create : ?config:H2_config.t -> ?workspace:H2_workspace.t -> unit -> t
(** A connection awaiting the client preface, with our SETTINGS
    (MAX_CONCURRENT_STREAMS, INITIAL_WINDOW_SIZE, MAX_HEADER_LIST_SIZE,
    ENABLE_PUSH 0, NO_RFC7540_PRIORITIES 1) and the connection
    WINDOW_UPDATE already queued. [workspace]: the worker's, shared with
    its other connections (see {!H2_workspace} for the rules); absent, the
    connection gets one of its own. Allocates.
    @raise Invalid_argument on a nonsensical config, or a workspace made
    for other buffer sizes. *)

val reset : t -> unit
(** Makes [t] as new, for the next connection. *)

(** {1 Input} *)

type event = H2_conn_state.event =
  | Need_more  (** everything usable is consumed; the rest is a partial frame *)
  | Headers  (** a request head opened {!event_stream}: see {!head} *)
  | Trailers  (** the request's trailer section (with END_STREAM) *)
  | Data  (** request body bytes: {!event_data_off}, {!event_data_len} *)
  | Reset  (** the stream is gone: reset by the peer, or by us for a stream error; {!event_error} *)
  | Goaway  (** the peer sent GOAWAY ({!goaway_last_stream}, {!event_error}) *)
  | Connection_error  (** GOAWAY is queued: flush, then close *)

val received : t -> Bigstring.t -> off:int -> len:int -> now:int -> event
(** [received t buf ~off ~len ~now] consumes bytes from [off] up to and
    including the first frame that produces an event.
    @raise Invalid_argument when the slice is outside [buf]. *)

val consumed_bytes : t -> int
val event_stream : t -> int
val event_end_stream : t -> bool
(** The peer ended the stream with this [Headers], [Data] or [Trailers]. *)

val event_data_off : t -> int
val event_data_len : t -> int
val event_sent : t -> int
(** [Reset]: the DATA payload bytes the stream had put in the output
    ({!data_sent}, which the reset made unreadable). *)

val event_error : t -> H2_error.t
val goaway_last_stream : t -> int
val reason : t -> string
(** What broke, for logs (constant strings). *)

val head : t -> H2_head.t
val head_buffer : t -> Bigstring.t

val head_length : t -> int
(** The bytes of [head_buffer], from 0, that the last head's names and
    values occupy: copied elsewhere with the same offsets, they keep
    {!head}'s spans valid there. *)

val consumed : t -> stream:int -> int -> unit
(** [consumed t ~stream n]: the application is done with [n] bytes of the
    stream's DATA; the receive windows are credited, and WINDOW_UPDATEs
    queued once half a window is owed. *)

(** {1 Responses} Build a head with {!start_response}, the [header]
    functions, then {!send_headers}; the encoder's exceptions
    ({!Hpack_encoder.Invalid_field}, {!Hpack_encoder.No_space} past
    [response_header_block_size]) pass through. *)

type submit = H2_conn_state.submit =
  | Queued
  | Stream_closed  (** no such open stream, or not in a state for this *)
  | No_space  (** the frame queue or the stream's body slot is full: send output first *)

val start_response : t -> stream:int -> status:int -> unit
val header : t -> Header_name.t -> string -> unit
val header_int : t -> Header_name.t -> int -> unit
val header_s : t -> string -> string -> unit
val header_span : t -> Header_name.t -> Bigstring.t -> Span.t -> unit

val header_s_span : t -> string -> Bigstring.t -> Span.t -> unit
(** [header_s_span t name src s]: a field of any (lower-case) [name], its
    value span [s] of [src]: what a server converting its own head lines
    needs for names {!Header_name} does not know. Does not allocate. *)

val header_checked : t -> Header_name.t -> Bigstring.t -> off:int -> len:int -> unit
(** [header_checked t name src ~off ~len]: a field whose value the caller
    has already checked as a field-value ({!Response}'s writers do): no
    second look at its bytes. *)

val header_prepared : t -> Prepared_fields.t -> unit
(** [header_prepared t p] appends the fields of a prepared set: inserted
    into the peer's dynamic table the first time, indices after that
    ({!Hpack_mirror}). *)

val header_encoded : t -> Bigstring.t -> off:int -> len:int -> unit
(** [header_encoded t src ~off ~len] appends fields already encoded as
    HPACK literals without indexing (which need no encoder state), such as
    a server's fixed fields encoded once. *)

val send_headers : t -> end_stream:bool -> submit

val send_data : t -> stream:int -> Bigstring.t -> off:int -> len:int -> end_stream:bool -> submit
(** Queues one body piece (one per stream at a time: [No_space] until
    {!body_pending} is 0). *)

val send_data_stable : t -> stream:int -> Bigstring.t -> off:int -> len:int -> end_stream:bool -> submit
(** As {!send_data} for bytes that stay unchanged until they are sent,
    even after the stream ends: {!next_output} hands a DATA frame of 8 KiB
    or more of them to the caller ({!output_external_buffer}) rather than
    copying it. *)

val send_data_external : t -> stream:int -> offset:int -> len:int -> end_stream:bool -> submit
(** A body piece of [len] bytes the caller writes itself after each DATA
    frame header {!next_output} emits for it (see the example above);
    [offset] is where the piece starts in the caller's body. *)

val body_pending : t -> stream:int -> int

val data_sent : t -> stream:int -> int
(** The DATA payload bytes of [stream] written into the output so far (its
    frames built; a file's bytes counted as their frame is); [-1] once the
    stream is closed. *)

val reset_stream : t -> stream:int -> H2_error.t -> unit
(** RST_STREAM from the application (e.g. CANCEL, INTERNAL_ERROR). *)

val shutdown : t -> unit
(** Graceful shutdown: GOAWAY(NO_ERROR, last stream id); later streams are
    ignored, open ones finish; {!finished} once all are done. *)

(** {1 Output} *)

val next_output : t -> Bigstring.t -> off:int -> len:int -> int
(** Fills [buf.{off..}] with queued frames, then scheduled DATA (see
    {!H2_output}); the bytes written. *)

val next_output_inline : t -> Bigstring.t -> off:int -> len:int -> int
(** As {!next_output}, but a DATA frame of an external body is at most the
    room left in [buf] after its header: the caller reads the
    {!output_external_len} bytes into [buf] right after the bytes written
    (at [off + result]) and may call again with the room left. Over TLS
    this puts frame headers and file bytes in the same records instead of
    a record per header. *)

val output_external_stream : t -> int
val output_external_len : t -> int
val output_external_offset : t -> int
val output_external_buffer : t -> Bigstring.t
(** The external payload's buffer when it comes from {!send_data_stable}
    ([output_external_offset] is then its offset there), or an empty one
    for {!send_data_external}'s. *)

val has_output : t -> bool
(** Frames are queued (DATA readiness aside). *)

val wants_output : t -> bool
(** Frames are queued, or some stream has DATA its windows let go: the
    loop should wait for the socket to be writable. A scan of the slots
    while some stream has a body queued, none otherwise. *)

(** {1 Inspection} *)

val active_streams : t -> int
val last_peer_stream : t -> int
val settings_acked : t -> bool
val failed : t -> bool
val finished : t -> bool
val peer_settings : t -> H2_settings.t

val stream_state : t -> stream:int -> int
(** An {!H2_stream} state, [0] when closed or idle. *)

val stream_send_window : t -> stream:int -> int
val stream_priority : t -> stream:int -> H2_priority.t
val connection_send_window : t -> int
val connection_recv_window : t -> int
