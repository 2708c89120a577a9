(** What HTTP/2 connections of one worker share, so that an idle
    connection holds only its own state and its HPACK decoder table.

    {b Shared while in use.} The decoded head ({!head}, its spans into
    {!decoded}) is written by a connection's {!H2_connection.received} and
    read by the application before the next [received] of {e any}
    connection sharing the workspace; the response head ({!response_block})
    is built between {!H2_connection.start_response} and
    {!H2_connection.send_headers} with no other connection's response in
    between. A worker that drives its connections one event at a time (an
    event loop) meets both rules; connections driven from several threads
    need a workspace each.

    {b Pooled.} Buffers a connection holds only while it has bytes in them
    are taken from pools here and given back once empty: the frame queue
    ([pending_size] bytes, while frames wait to be written) and the
    assembly buffer of a header block split over CONTINUATION frames
    ([max_header_list_size] bytes, while the block is open). A pool keeps at
    most {!spare_limit} buffers; more go to the GC.

    {b Allocation.} {!create} allocates the shared tables; {!take} allocates
    a buffer when its pool is empty (so in steady state, with as many
    buffers in use as at the busiest moment so far, nothing); {!give} does
    not allocate. *)

type pool

type t = private {
  config : H2_config.t;  (** the sizes the buffers were made for *)
  head : H2_head.t;
  decoded : Bigstring.t;  (** HPACK output: {!head}'s spans point here *)
  response_block : Bigstring.t;  (** the response head being encoded *)
  queues : pool;  (** frame queues, [config.pending_size] bytes each *)
  blocks : pool;  (** header-block assembly, [config.max_header_list_size] bytes each *)
}

val create : ?config:H2_config.t -> unit -> t
(** A workspace for connections made with [config] (the default when
    absent). Allocates. *)

val fits : t -> H2_config.t -> bool
(** The workspace's buffers are the sizes a connection with this config needs. *)

val spare_limit : int

val take : pool -> Bigstring.t
(** A buffer of the pool's size (new when the pool is empty). *)

val give : pool -> Bigstring.t -> Bigstring.t
(** [give p b] puts [b] back in [p] (dropped when [p] holds {!spare_limit}
    already; {!none}, or a buffer of another size, is ignored) and is
    {!none}, for the holder to keep in its place:
    [t.buf <- give pool t.buf]. *)

val spares : pool -> int
(** Buffers waiting in the pool. *)

val none : Bigstring.t
(** The empty buffer a connection holds in place of a pooled one. *)
