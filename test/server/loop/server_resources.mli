(** Descriptors, files and allocation of a live server.
    Test cases of [test_server.ml]; each starts a server of its own
    (on [Server_common.backend]) and stops it. *)

val files : unit -> unit
val emfile : unit -> unit
val zero_alloc_steady_state : unit -> unit
