(** What a connection needs next: the answer of every event of a
    connection's protocol ({!H1}, {!H2_session}, {!Ws}), carried out by the
    backend through {!Connection}, the switch. Documented at {!H1.action}; a
    module of its own so that every protocol answers the same type.

    The protocols do no I/O themselves: every effect they need goes down as
    one of these (or as {!Output}'s description of what to write), and the
    backend performs it with the connection's transport. *)

type t =
  | Read
  | Write
  | Close
  | Linger
  | Wait
  | Detach
  | Nothing
  | Read_buffered
      (** read the bytes the transport holds already (TLS records read
          ahead, {!Transport.buffered}) as for [Read]; when it holds none,
          do as for [Write] (nothing is pending: the write finds nothing
          and [written] says what comes next). HTTP/2 over TLS: the frames
          a client sent together are handled together. *)
  | Push
      (** as [Read], once the kernel was made to send what it holds
          ({!Transport.push}): the last write went with [MSG_MORE],
          announcing output that did not come (HTTP/2: a stream reset
          meanwhile) *)
