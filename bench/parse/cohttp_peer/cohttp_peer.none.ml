(* Selected by dune when cohttp is not installed (scripts/deps.sh bench
   installs it): the benchmark then runs without the cohttp peer. *)
let available = false
let unavailable () = failwith "cohttp is not installed (scripts/deps.sh bench)"
let parse_batch _ _ = unavailable ()
let header_count _ = -1
let response_setup ~date:_ ~etag:_ ~last_modified:_ = ()
let response_batch _ = unavailable ()
