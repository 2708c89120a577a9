(** A connection's pending output, as the state machine describes it, and
    the one walk over it that every transport runs.

    The output of a slot is [out\[out_sent, out_len)] (a response head and
    small bodies) followed by a body segment ([ext]: a string, a bigstring
    or a file range of [ext_len] bytes from [ext_off]). An HTTP/2
    connection over TCP may also place stable pieces between the frames of
    [out] ({!Gather}): they are written with [out], before [ext]. Transports and
    backends never compute this themselves: they ask {!segment} what to
    write next (the shape of httpaf's [next_write_operation]), write it,
    and report how much went with {!advance} ([report_write_result]).
    {!Walk} is that loop, written once; {!Plain} and {!Tls} instantiate it
    with their system calls, the completion backend asks {!segment} for the
    one [sendmsg] it submits, and the transcript tests' in-memory peer
    instantiates it too, so they run the very code the server runs.

    Only this module and {!H1} write the output fields of a slot.
    Nothing here allocates. *)

type result =
  | Flushed
      (** all of it left (but for records a TLS transport keeps, with
          [unsent], while [more_output] announces more) *)
  | Blocked  (** the peer takes no more now (or the budget is spent) *)
  | Dead  (** the peer is gone, or a file body ended early: close *)
(** What a write of the pending output came to, whatever the transport. *)

type segment =
  | Nothing  (** no output is pending *)
  | Head  (** [out\[out_sent, out_len)] alone: no body follows, or a file does *)
  | Head_string  (** the rest of [out], then [ext_str] from [ext_off] *)
  | Head_bigstring  (** the rest of [out], then [ext_bs] from [ext_off] *)
  | File  (** [out] is out: [ext_len] bytes of [file_fd] from [ext_off] *)
  | Gathered
      (** the rest of [out] with the pieces of [gather] between its frames
          ({!Gather}); [ext], if any, follows once they are written *)
  | Unsent
      (** nothing but what the transport made and did not send yet
          ([unsent]: TLS records) *)
(** The next write, as one vectored [sendmsg] at most. *)

val segment : Slot.t -> segment

val pending : Slot.t -> int
(** Bytes of the current output still to write, with the records the
    transport made and did not send ([unsent]) unless [more_output]
    announces more. *)

val advance : Slot.t -> int -> unit
(** [advance c n]: [n] bytes of [out] then [ext] were written (counted in
    [sent], for the access log). *)

val last : Slot.t -> bool
(** The output being written is the last on this connection (the
    transport may send it with the FIN). *)

val absorb_body : Slot.t -> max:int -> unit
(** [absorb_body c ~max] moves a string or bigstring body behind the head
    in [out] when both together take at most [max] bytes and [out] has
    room: for a transport that cannot write two spans at once (TLS: one
    record instead of two). *)

val file_absorbable : Slot.t -> max:int -> int
(** [file_absorbable c ~max]: the length of a file body that fits behind
    the head in [out] with both together at most [max] bytes (for
    {!absorb_body}'s reason), else [0]. The transport reads it in
    ([pread] into [out] at [out_len]) and says so with {!file_absorbed}:
    HTTP/2 over TLS leaves a DATA frame's file payload so, after the
    frame's header, and the frame leaves in one record. *)

val file_absorbed : Slot.t -> int -> unit
(** [file_absorbed c n]: the [n] bytes {!file_absorbable} gave were read
    into [out] behind the head; they are now part of it. *)

val file_slice : Slot.t -> int
(** Bytes of the file body to read into [out] next ([out] is empty):
    [min ext_len (length out)]. *)

val file_sliced : Slot.t -> int -> unit
(** [file_sliced c n]: [n > 0] bytes of the file body were read into [out]
    at offset 0; they are now the head to write. *)

(** What a transport provides to the walk. Each write returns the bytes
    written ([> 0]), [0] to be called again (interrupted, or a TLS record
    completed), {!would_block} or {!gone}. *)
module type TRANSPORT = sig
  val budget : int
  (** Bytes one connection may write per call before the loop turns to the
      others (a client on loopback reads a large file as fast as it is
      sent). *)

  val holds_last : bool
  (** The transport sends the last output with [MSG_MORE] ([held]), for
      the close to release with the FIN. *)

  val head : Slot.t -> more:bool -> int
  (** Writes [out\[out_sent, out_len)]; [more]: more output follows (a
      file), or it is the last before a close. *)

  val head_string : Slot.t -> len:int -> more:bool -> int
  val head_bigstring : Slot.t -> len:int -> more:bool -> int
  val file : Slot.t -> len:int -> int

  val gathered : Slot.t -> more:bool -> int
  (** Writes from the start of {!Gathered}: [out]'s rest with the pieces
      between its frames (all of it, or a prefix). *)

  val unsent : Slot.t -> int
  (** Bytes the transport made but has not sent (TLS records kept while
      more follow, or not taken whole by the socket); the walk keeps
      [unsent] equal to it after each write. [0] for plain TCP. *)

  val send_unsent : Slot.t -> int
  (** Sends what {!unsent} counts ({!Unsent}): bytes sent ([0]: nothing
      left), {!would_block} or {!gone}. *)
end

val would_block : int
val gone : int

module Walk (_ : TRANSPORT) : sig
  val write : Slot.t -> result
  (** Writes the pending output until it is all out, the socket is full,
      or [T.budget] bytes left in this call. No budget for a bigstring body
      the handler may reuse: yielding would mean copying it
      ({!H1.blocked}); only a full socket makes that necessary. *)
end
