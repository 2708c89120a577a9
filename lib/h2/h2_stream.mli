(** The per-stream state of an HTTP/2 connection ({!H2_connection}), in
    preallocated slots.

    A table holds [capacity] slots, each an index into parallel [int]
    arrays: no record per stream. It starts with {!initial_capacity}
    slots and doubles when a stream opens while all are in use, up to
    [max_capacity] (the SETTINGS_MAX_CONCURRENT_STREAMS the connection
    advertises): an idle connection holds a few slots, not 128. Growing
    keeps every slot's index.
    A slot is free when its stream id is [0]. A stream in the RFC 9113 §5.1
    state "closed" (or "idle") has no slot: closing frees it for reuse.

    The fields are mutable arrays on purpose: {!H2_connection} and
    {!H2_output} are the only writers (nothing outside the connection
    writes them); everyone else reads through {!H2_connection}'s
    accessors.

    {b Allocation.} {!create} allocates the arrays, and {!open_slot} when
    it grows them (a new peak of concurrent streams in the table's life,
    at most log{_2}([max_capacity] / {!initial_capacity}) times); nothing
    else does. *)

(** RFC 9113 §5.1 states a slot can be in, as ints in {!t.state}. *)

val open_ : int  (** [1] "open": both sides may send *)

val half_closed_remote : int  (** [2] the peer sent END_STREAM *)

val half_closed_local : int  (** [3] we sent END_STREAM *)

val state_name : int -> string
(** ["open"], ["half-closed (remote)"], ["half-closed (local)"], ["closed"]
    (for [0] and any other value). *)

(** What {!t.out_kind} says the stream has queued to send. *)

val out_none : int  (** nothing (after the last frame, or before a body) *)

val out_buffer : int  (** [out_len] bytes of [out_buf] from [out_off] *)

val out_external : int
(** [out_len] bytes the caller writes itself after each DATA frame header
    ({!H2_output.next}); [out_off] counts the bytes already framed. *)

val out_stable : int
(** As [out_buffer], bytes that stay put until sent (a file cache's): on a
    plain connection a large piece of them can go out from where it is. *)

type t = {
  mutable capacity : int;  (** slots now; grows as streams open *)
  max_capacity : int;  (** the most it grows to *)
  mutable id : int array;  (** the stream id, [0] for a free slot *)
  mutable state : int array;
  mutable recv_window : int array;  (** bytes the peer may still send on it *)
  mutable recv_unacked : int array;  (** consumed by the application, not yet returned by WINDOW_UPDATE *)
  mutable recv_held : int array;  (** delivered to the application, not yet consumed *)
  mutable send_window : int array;  (** bytes we may still send on it (can go negative, §6.9.2) *)
  mutable priority : int array;  (** an {!H2_priority.t} *)
  mutable content_length : int array;  (** the request's content-length, [-1] when absent *)
  mutable data_received : int array;  (** DATA payload bytes received (padding excluded) *)
  mutable data_sent : int array;  (** DATA payload bytes put in the output (frames written) *)
  mutable response : int array;  (** [0] no response yet, [1] HEADERS queued, [2] END_STREAM queued *)
  mutable out_kind : int array;  (** written by {!set_out_kind} only, which counts [sending] *)
  mutable sending : int;
      (** slots whose [out_kind] is not [out_none]: while [0], no slot
          {!wants_to_send} and the scheduler's scans are skipped *)
  mutable out_buf : Bigstring.t array;
      (** a free slot may still name the buffer its last stream sent from,
          until the slot is reused or the table {!clear}ed: the same buffer
          queued again (a cached file's) is no pointer write *)
  mutable out_off : int array;
  mutable out_len : int array;  (** bytes still to send of the current body piece *)
  mutable out_end : bool array;  (** END_STREAM goes with the last byte of the piece *)
  mutable active : int;  (** slots in use *)
  mutable last_found : int;
  mutable free_hint : int;  (** a slot freed last, likely still free *)
  mutable in_use_below : int;  (** every slot below it is in use: where a look for a free slot starts *)
  mutable hint : int array;
      (** by stream id ([id lsr 1], masked to its power-of-two length): the
          slot that stream was opened in, or a stale guess *)
  mutable displaced : int;
      (** streams in use whose [hint] entry names another slot; while [0], a
          stream id the hint does not lead to has no slot (no scan) *)
}

val initial_capacity : int
(** [4]. *)

val create : int -> t
(** [create max_capacity] is an empty table of
    [min max_capacity initial_capacity] slots. Allocates.
    @raise Invalid_argument when [max_capacity < 1]. *)

val clear : t -> unit
(** Frees every slot, and lets go of the buffers they sent from. *)

val find : t -> int -> int
(** [find t id] is the slot of stream [id], or [-1] (always for
    [id <= 0]). The stream's [hint] entry, else the last slot found,
    else [-1] at once unless some stream in use lost its entry to another
    ([displaced > 0]): then a linear scan over [capacity] ints. *)

val open_slot : t -> id:int -> recv_window:int -> send_window:int -> int
(** [open_slot t ~id ~recv_window ~send_window] takes a free slot for a
    new stream in state {!open_} and returns it (growing the table when
    all slots are in use), or [-1] when [max_capacity] slots are in use. *)

val free : t -> int -> unit
(** [free t slot] closes the stream and makes its slot reusable. *)

val set_out_kind : t -> int -> int -> unit
(** [set_out_kind t slot kind] sets [out_kind] of a slot below [capacity]
    (unchecked), keeping [sending] right. Does not allocate. *)

val wants_to_send : t -> int -> bool
(** [wants_to_send t slot]: it has a body piece with bytes left and a
    positive send window, or an empty END_STREAM DATA frame to send. *)
