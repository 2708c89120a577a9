(** What a connection needs next: the answer of every event of a connection
    state machine ({!H1}, and {!H2_session} behind it), carried out by the
    backend. Documented at {!H1.action}; a module of its own so that both
    state machines answer the same type. *)

type t = Read | Write | Close | Linger | Wait | Detach | Nothing
