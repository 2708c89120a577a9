(** Units without a server: the timer wheel, access-log lines and times,
    listen addresses. Test cases of [test_server.ml]. *)

val wheel_basics : unit -> unit
val log_time : unit -> unit
val parse_listen : unit -> unit
val log_formats : unit -> unit
val refusal_addresses : unit -> unit
val wheel_model : QCheck2.Test.t
val wheel_zero_alloc : unit Alcotest.test_case
val gc_settle : unit -> unit
