(** What a connection needs next: the answer of every entry point of a
    protocol's state machine ({!H1}, and {!Ws} to which it delegates),
    carried out by the backends. {!H1.action} documents each. Its own
    module so that the protocols {!H1} delegates to can answer it. *)

type t = Read | Write | Close | Linger | Wait | Detach | Nothing
