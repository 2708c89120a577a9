(** The client role of an HTTP/2 connection (RFC 9113), sans I/O.

    The caller owns the socket, the buffers and the clock; a {!t} is the
    protocol state of one connection, created once and {!reset} for the
    next. It reuses the server role's pieces: {!H2_frame}'s reader,
    {!H2_write}'s writers, {!Hpack_encoder}, {!Hpack_decoder} and
    {!H2_settings}; its stream table is its own (a client's streams need
    none of {!H2_stream}'s response scheduling).

    {[
      let c = H2_client.create () in
      (* send next_output's bytes: the preface, SETTINGS, WINDOW_UPDATE *)
      match H2_client.start_request c ~meth:"GET" ~scheme:"http" ~authority:"a" ~path:"/" with
      | Submitted ->
          H2_client.header_s c "user-agent" "x";
          ignore (H2_client.send_request c ~end_stream:true);
          let id = H2_client.request_stream c in
          (* loop: write next_output's bytes; read bytes into [buf];
             match received c buf ~off ~len ~head with
             | Response -> status c, field_name/field_value c i (spans of head)
             | Data -> event_data_off/len (spans of buf); consumed c ~stream n
               when done with them
             | ...; advance off by consumed_bytes c *)
      | Too_many_streams | Going_away | No_space | Closed -> ...
    ]}

    {b Output.} Every frame the client sends (preface, SETTINGS and their
    ACKs, request heads, DATA, WINDOW_UPDATE, PING ACK, RST_STREAM,
    GOAWAY) is copied into an internal queue of [output_size] bytes, which
    {!next_output} drains into the caller's buffer. Nothing is sent that
    the queue cannot hold: a request answers [No_space], {!send_data} takes
    fewer bytes.

    {b Input.} {!received} consumes whole frames from [src] up to the first
    one that makes an event ({!consumed_bytes}); the caller keeps the
    unconsumed rest (a partial frame) and appends to it. Bytes may arrive
    one at a time: the frame reader keeps no state between calls. A
    connection needs [src] room for 9 + [max_frame_size] bytes.

    {b Response heads} are decoded whole (HEADERS plus CONTINUATION, the
    fragments assembled in an internal buffer of [max_header_list_size]
    bytes) into [head], the caller's buffer: {!field_name} and
    {!field_value} are spans of it, valid until the next header block is
    decoded. Checked (RFC 9113 §8.3.2, §8.2): [:status] present, first,
    three digits, not 101; no other pseudo-header; names lower case; no
    connection-specific field; one content-length. A malformed head resets
    its stream with PROTOCOL_ERROR ([Reset], {!event_failure}
    [Malformed_response]); at most [max_interim] 1xx heads per stream
    ([Too_many_interim]); at most [max_fields] fields ([Too_many_fields]).
    Every block is decoded to its end, so HPACK stays in step after a
    stream error.

    {b Flow control.} Received DATA counts against our windows until the
    caller says it is done with it ({!consumed}); WINDOW_UPDATE goes out
    once half a window is owed, so a caller that does not consume stops the
    server (backpressure). Sending, {!send_data} takes as many bytes as the
    server's windows and its SETTINGS_MAX_FRAME_SIZE allow and answers how
    many; {!send_window} says how many it would take now. A server that
    never opens its window leaves {!send_window} at [0]: a stall the
    caller's timer sees, a [Window_update] event telling when to try again.

    {b Hostile servers.} Push is off (SETTINGS_ENABLE_PUSH 0), so any
    PUSH_PROMISE is a connection error PROTOCOL_ERROR, as are SETTINGS with
    ENABLE_PUSH 1 and PRIORITY_UPDATE (RFC 9218 §7.1); PRIORITY and
    unknown frame types are ignored. A header block over [max_header_list_size] bytes (as
    received or decoded) or with more than [max_continuations] CONTINUATION
    frames ends the connection with ENHANCE_YOUR_CALM (COMPRESSION_ERROR when
    it is the decoder's limit). Frames on streams we never opened (even ids,
    odd ids not used yet) are PROTOCOL_ERROR; DATA or HEADERS on streams we
    have reset are tolerated (they were in flight, §5.1) and DATA's bytes
    given back to the connection window. DATA beyond a window: the
    connection's is a connection error, a stream's a stream error
    (FLOW_CONTROL_ERROR). A content-length that the DATA does not add up
    to resets the stream ([Content_length]), except for HEAD, 204 and 304.
    The first frame must be SETTINGS. A server that never sends it, never
    acknowledges ours ({!settings_received}, {!settings_acked}) or never
    answers a {!ping} is for the caller's timers, as is a stalled window.
    The ACKs a flood of SETTINGS or PING asks for are queued while the
    output queue has room, then the connection ends ([Output_full]): the
    caller that drains {!next_output} as it should never sees that.

    {b Errors.} A stream error queues RST_STREAM and answers [Reset] with
    {!event_error} (the wire code) and {!event_failure} (which rule). A
    connection error queues GOAWAY and answers [Connection_error]; every
    later {!received} answers it again, and {!error}/{!failure}/{!reason}
    keep saying why.

    {b GOAWAY from the server}: [Goaway], with {!goaway_last_stream}; the
    streams above it were not processed (RFC 9113 §6.8) and are closed:
    {!unprocessed_count}/{!unprocessed_stream} list them so the caller may
    retry them on a new connection. Streams at or below it go on; no new
    stream opens ([Going_away]).

    {b Reuse.} {!reset} makes [t] as {!create} made it: no stream, window,
    HPACK table entry, peer setting or failure survives.

    {b Allocation.} {!create} allocates. Nothing else does, for a
    connection's life (requests, responses, DATA, windows, errors); the
    exceptions raised are constant. *)

type t

type event =
  | Need_more  (** everything usable is consumed; the rest is a partial frame *)
  | Settings  (** the server's SETTINGS, applied and acknowledged ({!peer_settings}) *)
  | Response  (** the final response head of {!event_stream}: {!status}, fields *)
  | Interim  (** a 1xx head (not 101); the final one follows *)
  | Trailers  (** the trailer section (fields, no status), which ends the stream *)
  | Data  (** response body bytes {!event_data_off}, {!event_data_len} of [src] *)
  | Reset  (** the stream is gone: RST_STREAM from the server or ours for a stream error *)
  | Window_update  (** a send window grew ({!event_stream}, [0] for the connection's) *)
  | Ping_ack  (** the answer to our {!ping} ({!event_ping}) *)
  | Goaway  (** the server sent GOAWAY; see {!unprocessed_count} *)
  | Connection_error  (** GOAWAY is queued: flush {!next_output}, then close *)

(** Which rule a [Reset] or [Connection_error] is about. *)
type failure =
  | No_failure
  | Frame_rule  (** {!H2_frame}'s checks (see {!reason}) *)
  | Hpack  (** the header block does not decode (COMPRESSION_ERROR) *)
  | Settings_expected  (** the server's first frame was not SETTINGS *)
  | Bad_stream_id  (** a frame on a stream the client never opened *)
  | Continuation_expected  (** another frame inside a header block, or CONTINUATION outside one *)
  | Continuation_flood  (** more than [max_continuations] CONTINUATION frames *)
  | Header_block_too_large  (** an assembled header block over [max_header_list_size] *)
  | Push_promise  (** PUSH_PROMISE, push being disabled *)
  | Push_enabled  (** SETTINGS_ENABLE_PUSH 1 from a server *)
  | Priority_update  (** PRIORITY_UPDATE from a server (RFC 9218 §7.1) *)
  | Flow_control  (** DATA beyond a receive window, or a send window pushed past 2{^31}-1 *)
  | Malformed_response  (** a head breaking §8.3.2/§8.2, DATA before the head, trailers without END_STREAM *)
  | Too_many_fields  (** more than [max_fields] fields *)
  | Too_many_interim  (** more than [max_interim] 1xx heads *)
  | Content_length  (** the body is longer or shorter than content-length *)
  | Stream_closed  (** HEADERS or DATA after the server's END_STREAM *)
  | Peer_reset  (** RST_STREAM from the server *)
  | Peer_goaway  (** GOAWAY from the server *)
  | Output_full  (** a control frame did not fit the output queue *)

val failure_to_string : failure -> string
(** A stable snake_case name. Does not allocate. *)

val create :
  ?max_concurrent_streams:int ->
  ?initial_window_size:int ->
  ?connection_window:int ->
  ?max_frame_size:int ->
  ?max_header_list_size:int ->
  ?max_continuations:int ->
  ?max_interim:int ->
  ?max_fields:int ->
  ?request_head_size:int ->
  ?output_size:int ->
  unit ->
  t
(** A connection whose preface, SETTINGS (ENABLE_PUSH 0,
    INITIAL_WINDOW_SIZE, MAX_FRAME_SIZE, MAX_HEADER_LIST_SIZE) and
    connection WINDOW_UPDATE are queued. [max_concurrent_streams]
    (default 100): stream slots, our own cap under the server's;
    [initial_window_size] (65535): each stream's receive window;
    [connection_window] (1 MiB, at least 65535); [max_frame_size] (16384):
    advertised and enforced; [max_header_list_size] (64 KiB): advertised,
    HPACK's limit, the assembly buffer, and the least [head] size;
    [max_continuations] (16); [max_interim] (8); [max_fields] (256);
    [request_head_size] (16 KiB): the largest encoded request head;
    [output_size] (256 KiB): the output queue. Allocates.
    @raise Invalid_argument on a nonsensical value. *)

val reset : t -> unit
(** As new, for the next connection (the preamble queued again). *)

(** {1 Requests} *)

type submit =
  | Submitted
  | Too_many_streams  (** the server's SETTINGS_MAX_CONCURRENT_STREAMS (or ours) is reached *)
  | Going_away  (** GOAWAY received or sent, or stream ids used up: use a new connection *)
  | No_space  (** the output queue lacks room for a head: drain {!next_output} first *)
  | Closed  (** the connection failed *)

val can_open : t -> bool
(** A request would be accepted now (output room aside). *)

val start_request : t -> meth:string -> scheme:string -> authority:string -> path:string -> submit
(** Begins a request head (the four pseudo-headers, HPACK-encoded). When it
    answers [Submitted], add fields with {!header} etc., then
    {!send_request}; anything else leaves nothing begun. A head is not
    started for CONNECT (which has no [:scheme] and [:path]).
    @raise Hpack_encoder.Invalid_field unless [meth] is a token other than
    CONNECT, [scheme] a URI scheme, [authority] uri-host [\[":" port\]]
    ({!Authority.valid_host}, not empty, no userinfo) and [path] visible
    ASCII without ['#'] starting with ['/'] (or ["*"] for OPTIONS)
    (RFC 9113 §8.3.1); the head is then abandoned (start another),
    harmlessly: the encoder keeps no dynamic table, so nothing of it
    reached HPACK state. *)

val header : t -> Header_name.t -> string -> unit
val header_s : t -> string -> string -> unit  (** any lower-case name *)

val header_span : t -> Header_name.t -> Bigstring.t -> Span.t -> unit
val header_s_span : t -> string -> Bigstring.t -> Span.t -> unit
(** Fields of the head begun, checked for a caller forwarding names it
    does not trust (a proxy): a name starting with [':'] (the
    pseudo-headers are {!start_request}'s), a connection-specific field
    ([connection], [keep-alive], [proxy-connection], [transfer-encoding],
    [upgrade]) and [te] other than ["trailers"] are refused (RFC 9113
    §8.2.2), as are an upper-case or non-token name and a value holding
    NUL, CR or LF. Any exception abandons the head: {!send_request} then
    raises [Invalid_argument] until a new {!start_request}.
    @raise Hpack_encoder.No_space when the head outgrows [request_head_size]
    @raise Hpack_encoder.Invalid_field on a refused field
    @raise Invalid_argument when no head is begun. *)

val send_request : t -> end_stream:bool -> submit
(** Queues the head as HEADERS (+ CONTINUATION past the server's
    SETTINGS_MAX_FRAME_SIZE) on the next odd stream id ({!request_stream});
    [end_stream] when there is no body. [No_space] keeps the head for a
    retry after {!next_output}; any other refusal drops it.
    @raise Invalid_argument when no head is begun. *)

val request_stream : t -> int
(** The stream id of the last request {!send_request} queued. *)

val send_window : t -> stream:int -> int
(** The DATA bytes {!send_data} would let go now on [stream] (the smaller
    of the connection's and the stream's send windows, at least 0); [-1]
    when the stream is closed. *)

val send_data : t -> stream:int -> Bigstring.t -> off:int -> len:int -> end_stream:bool -> int
(** Queues request body bytes as DATA frames (copied), as many as the
    windows, the server's frame size and the output queue allow: the
    bytes taken, [0 .. len]; END_STREAM goes with the last byte once all
    [len] are taken (with [len = 0], an empty DATA frame with END_STREAM
    when the queue has 9 bytes of room). [-1] when the stream cannot send
    (closed, reset, already ended, or the connection failed). *)

val sending : t -> stream:int -> bool
(** The request body may still be sent: we have not ended the stream and
    it is not closed. *)

val cancel : t -> stream:int -> H2_error.t -> unit
(** RST_STREAM with that code (e.g. CANCEL), the stream forgotten. *)

val ping : t -> int -> bool
(** Queues a PING carrying the integer; [false] when the queue is full. *)

val shutdown : t -> unit
(** Queues GOAWAY(NO_ERROR): no new request; open ones go on. *)

(** {1 Input} *)

val received : t -> Bigstring.t -> off:int -> len:int -> head:Bigstring.t -> event
(** [received t src ~off ~len ~head] consumes frames from
    [src.{off .. off+len-1}] up to the first event; header blocks are
    decoded into [head] (at least [max_header_list_size] bytes).
    @raise Invalid_argument when the slice is outside [src] or [head] is
    too small. *)

val consumed_bytes : t -> int
(** The bytes of [src] the last {!received} consumed. *)

val consumed : t -> stream:int -> int -> unit
(** [consumed t ~stream n]: the caller is done with [n] bytes of
    [stream]'s DATA (also once the stream is closed): the windows are
    credited, WINDOW_UPDATE queued once half a window is owed. *)

(** {2 The last event} *)

val event_stream : t -> int
val event_end_stream : t -> bool  (** the server ended the stream with it *)

val event_data_off : t -> int
val event_data_len : t -> int
val event_error : t -> H2_error.t
val event_failure : t -> failure

val reason : t -> string
(** A constant phrase saying what broke. *)

val event_ping : t -> int

(** {2 The last head} ([Response], [Interim], [Trailers]) *)

val status : t -> int  (** [-1] for trailers *)

val field_count : t -> int
val field_name : t -> int -> Span.t  (** in [head]; [0 <= i < field_count] (unchecked beyond the array) *)

val field_value : t -> int -> Span.t
val field_header_name : t -> int -> Header_name.t

val find_field : t -> Header_name.t -> int
(** The index of the first field of that name, [-1] when none ([Other]
    matches any unknown name). *)

val content_length : t -> int  (** the head's content-length, [-1] when absent *)

(** {1 Output} *)

val next_output : t -> Bigstring.t -> off:int -> len:int -> int
(** Copies up to [len] queued bytes to [buf.{off..}]: the bytes copied. *)

val has_output : t -> bool

(** {1 Inspection} *)

val active_streams : t -> int
val settings_received : t -> bool
val settings_acked : t -> bool  (** the server acknowledged our SETTINGS *)

val peer_settings : t -> H2_settings.t
val goaway_received : t -> bool
val goaway_last_stream : t -> int  (** [-1] before any GOAWAY *)

val unprocessed_count : t -> int
val unprocessed_stream : t -> int -> int
(** The streams the last GOAWAY closed unprocessed (ids above its last
    stream id), safe to retry elsewhere. *)

val failed : t -> bool
val error : t -> H2_error.t
val failure : t -> failure

val finished : t -> bool
(** Failed or going away, no stream left, the output drained: close. *)

val stream_state : t -> stream:int -> int
(** An {!H2_stream} state ([1] open, [2] half-closed (remote), [3]
    half-closed (local)); [0] when closed. *)

val stream_recv_window : t -> stream:int -> int
val connection_send_window : t -> int
val connection_recv_window : t -> int
