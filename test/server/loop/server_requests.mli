(** Requests and responses on one connection.
    Test cases of [test_server.ml]; each starts a server of its own
    (on [Server_common.backend]) and stops it. *)

val keep_alive : unit -> unit
val pipelining : unit -> unit
val many_pipelined : unit -> unit
val head_request : unit -> unit
val expect_continue : unit -> unit
val chunked_body : unit -> unit
val oversized_body : unit -> unit
val bad_request : unit -> unit
val connect_requests : unit -> unit
val client_address : unit -> unit
val several_listeners : unit -> unit
val stats_token_required : unit -> unit
val handler_errors : unit -> unit
val responses : unit -> unit
val backpressure : unit -> unit
