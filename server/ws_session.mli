(** The state of one WebSocket connection ({!Ws}): kept in the slot's
    [session] field while its [mode] is [Websocket], and its output queue.

    {2 Output}
    What is being written is the slot's [out] (and [ext]), as for any
    response ({!Output}). Frames queued meanwhile go to [q] (a write
    buffer of the pool), followed by at most one payload sent from where
    it is ([q_ext], a stable bigstring: a broadcast). {!start_output}
    moves the queue to [out] once [out] is written, by swapping the two
    buffers: [out] is never touched while the transport may read it (an
    io_uring send in flight). Continuations of {!Ws.flush} follow their
    bytes from [q_conts] to [out_conts] and run when [out] is written.

    {2 Input}
    A message that arrives whole in one read is a piece of [rbuf]
    ([piece_off], [piece_len >= 0]) until its end; any other is copied
    into [msg] (the body pool), which {!keep_piece} does before [rbuf] is
    reused.

    Only {!Ws} and this module write these fields. Nothing here allocates
    except a buffer taken from a pool that has none spare. *)

open Httpz

type kind = Text | Binary

type config = {
  max_message : int;
  max_send_buffer : int;
  ping_interval_ms : int;
  idle_timeout_ms : int;
  deflate : bool;
  origins : Ws_handshake.origins;
}

val default_config : config

type handlers = {
  on_message : Slot.t -> kind -> Bigstring.t -> off:int -> len:int -> unit;
  on_close : Slot.t -> int -> unit;
}

type phase =
  | Opening  (** the 101 is being written *)
  | Open
  | Closing  (** our Close is queued; the peer's is awaited (frames are read and dropped) *)
  | Finished  (** both Closes were exchanged, or the connection failed: end after the output *)
  | Dead  (** close at once: the peer is gone or does not read *)

type session = {
  reader : Ws_reader.t;
  cfg : config;
  handlers : handlers;
  deflate : Ws_deflate.t option;
  protocol : string;  (** the subprotocol chosen, or [""] *)
  mutable phase : phase;
  mutable busy : bool;  (** processing input: sends only queue *)
  mutable reported : bool;  (** [on_close] was called *)
  mutable piece_off : int;
  mutable piece_len : int;
  mutable msg : Bigstring.t;
  mutable msg_len : int;
  mutable q : Bigstring.t;
  mutable q_len : int;
  mutable q_ext : Bigstring.t;
  mutable q_ext_off : int;
  mutable q_ext_len : int;
  mutable q_conts : (Slot.t -> unit) list;
  mutable out_conts : (Slot.t -> unit) list;
  mutable last_rx : int;  (** tick of the last bytes received *)
  mutable last_ping : int;
}

type Slot.session += Session of session

val session : Slot.t -> session
(** @raise Invalid_argument when the slot is not a WebSocket. *)

val is_websocket : Slot.t -> bool

val high_water : int
(** Output pending above this stops reading until it left. *)

val close_ticks : int
(** How long the peer's Close is awaited. *)

val give_q : Slot.t -> session -> unit
val give_msg : Slot.t -> session -> unit
val append_msg : Slot.t -> session -> Bigstring.t -> int -> int -> unit
val keep_piece : Slot.t -> session -> unit

val buffered : Slot.t -> int
(** Bytes queued and not yet written (0 for a non-WebSocket slot). *)

val start_output : Slot.t -> session -> unit
val frame_opcode : kind -> Ws_frame.opcode

val queue_header : Slot.t -> session -> Ws_frame.opcode -> rsv1:bool -> len:int -> bool
(** Queues a frame header for a payload of [len] bytes that the caller
    writes at [q_len] right after (room is made); [false] (and the
    session [Dead]) when it would pass [max_send_buffer]. *)

val queue_copy :
  Slot.t -> session -> Ws_frame.opcode -> rsv1:bool -> Bigstring.t -> off:int -> len:int -> unit

val queue_control : Slot.t -> session -> Ws_frame.opcode -> Bigstring.t -> off:int -> len:int -> unit
val queue_close : Slot.t -> session -> int -> string -> unit
