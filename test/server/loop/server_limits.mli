(** Timeouts and bounds.
    Test cases of [test_server.ml]; each starts a server of its own
    (on [Server_common.backend]) and stops it. *)

val timeouts : unit -> unit
val unwanted_body : unit -> unit
val body_deadline : unit -> unit
val body_memory_returns : unit -> unit
val waiting_handlers : unit -> unit
val max_connections : unit -> unit
