(** Workers, supervisor, shutdown, access log, start failures.
    Test cases of [test_server.ml]; each starts a server of its own
    (on [Server_common.backend]) and stops it. *)

val workers : unit -> unit
val orphaned_workers : unit -> unit
val graceful_shutdown : unit -> unit
val access_log : unit -> unit
val start_failures : unit -> unit
