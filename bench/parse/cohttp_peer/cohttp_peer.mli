(** cohttp 4.0.0 (Debian [libcohttp-ocaml-dev]) as a peer in the parser
    benchmarks. When cohttp is not installed, dune selects a stand-in whose
    [available] is [false] and whose functions raise [Failure]. *)

val available : bool

val parse_batch : string -> int -> int
(** [parse_batch s n] parses the request head [s] [n] times with
    [Cohttp.Request.Make(IO).read] over an in-memory input channel (a
    fresh one per parse, as a connection reading a new request would
    have); the number of parses that did not return [`Ok]. *)

val header_count : string -> int
(** [header_count s] is the number of header fields cohttp reads from [s],
    or [-1] when it does not parse. *)

val response_setup : date:string -> etag:string -> last_modified:string -> unit
(** [response_setup ~date ~etag ~last_modified] fixes the header values
    {!response_batch} writes. *)

val response_batch : int -> int
(** [response_batch n] builds and writes [n] times the same response head
    as the httpz [full_head] case ([Cohttp.Response.make] and
    [Response.Make(IO).write_header] into a reused [Buffer.t]); the length
    of the last head written. *)
