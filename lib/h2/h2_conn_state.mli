(** The state of one HTTP/2 server connection, shared by {!H2_receive}
    (the receiving half) and {!H2_connection} (the public face, which
    documents the behaviour). Only those two modules write its fields.

    {b Allocation.} {!create} allocates the connection's own state (and a
    workspace when none is given); buffers come from the workspace's pools
    (see {!H2_workspace}). *)

type event = Need_more | Headers | Trailers | Data | Reset | Goaway | Connection_error
type submit = Queued | Stream_closed | No_space

val phase_preface : int
val phase_first_settings : int
val phase_running : int
val phase_failed : int

type t = {
  config : H2_config.t;
  reader : H2_frame.t;
  decoder : Hpack_decoder.t;
  ws : H2_workspace.t;  (** the worker's: decoded head, response head, buffer pools *)
  mutable block : Bigstring.t;
      (** HEADERS + CONTINUATION fragments being assembled: from
          [ws.blocks] while such a block is open, else {!H2_workspace.none} *)
  mutable block_len : int;
  mutable block_stream : int;  (** [0] unless a header block is open *)
  mutable block_end_stream : bool;
  mutable block_bad_priority : bool;
  mutable continuations : int;
  streams : H2_stream.t;
  out : H2_output.t;
  peer : H2_settings.t;
  mutable phase : int;
  mutable last_peer_stream : int;
  mutable goaway_sent : bool;
  mutable goaway_last : int;  (** the last stream id our GOAWAY let through; [max_int] before *)
  mutable settings_acked : bool;
  mutable window_start : int;
  mutable resets : int;
  mutable settings_count : int;
  mutable pings : int;
  mutable empty_data : int;
  mutable window_updates : int;
  mutable refused : int;
  mutable consumed : int;
  mutable ev_stream : int;
  mutable ev_end_stream : bool;
  mutable ev_data_off : int;
  mutable ev_data_len : int;
  mutable ev_sent : int;  (** [Reset]: the DATA payload bytes the stream had sent *)
  mutable ev_error : H2_error.t;
  mutable ev_last_stream : int;
  mutable reason : string;
  mutable response_stream : int;
}

val create : ?config:H2_config.t -> ?workspace:H2_workspace.t -> unit -> t
val reset : t -> unit

val release_block : t -> unit
(** Gives the header-block assembly buffer back (the block is done). *)

val fail : t -> H2_error.t -> string -> event
(** Queues GOAWAY(last peer stream, code, reason) once; [Connection_error]. *)

val calm : t -> string -> event
(** [fail] with ENHANCE_YOUR_CALM. *)

val stream_error : t -> int -> H2_error.t -> string -> event
(** RST_STREAM on an application-visible slot, freed; [Reset]. *)

val refuse : t -> int -> H2_error.t -> event
(** RST_STREAM on a stream the application never saw; [Need_more]. *)

val tick : t -> int -> unit
(** Starts a new abuse-counting window when [window_ms] have passed. *)

val is_idle : t -> int -> bool
(** An even id, or one above every stream the peer opened. *)
