(** What the live tests of the server share: servers started on the
    backend of the current group ({!backend}), the test handler, checks.
    A helper of the test executable; everything here may allocate. *)

val find_sub : string -> string -> int
(** [Httpz_test_support.find_sub]. *)

val backend : Httpz_server.Server.io ref
(** The backend every server of the current group runs on; [test_server.ml]
    sets it before each test. *)

val on_backend : Httpz_server.Server.config -> Httpz_server.Server.config
(** The config with [io = !backend]. *)

val start : ?config:Httpz_server.Server.config -> (Httpz_server.Ctx.t -> unit) -> Httpz_live.server
(** [Httpz_live.start] on {!backend}. *)

val with_server :
  ?config:Httpz_server.Server.config -> (Httpz_server.Ctx.t -> unit) -> (Httpz_live.server -> 'a) -> 'a
(** [Httpz_live.with_server] on {!backend}. *)

(** {1 The test handler} *)

val hello : string
(** The body of [GET /]. *)

val is : Httpz.Bigstring.t -> Httpz.Span.t -> string -> bool
(** [Span.equal], bound once so a handler's test allocates no closure. *)

val huge : Httpz.Bigstring.t
(** The 8 MiB body of [/huge]. *)

val handler : Httpz_server.Ctx.t -> unit
(** Answers by target: [/] ({!hello}), [/echo] and [/count] (the request
    body, its length), [/pipe] (waits on a descriptor of its own),
    [/forever] (never answers; counts its cancels) and [/cancelled] (the
    count), [/stream-raise], [/client] (the peer's address and port),
    [/refuse] (405 without reading the body), [/chunked], [/big-chunked]
    (1,000,000 bytes), [/big] (200,000), [/huge], [/raise], [/unanswered],
    [/bad-header], [/close], [/no-content]; any other target is echoed. *)

(** {1 Checks} *)

val check_status : string -> int -> int -> unit
val check_str : string -> string -> string -> unit

val check_hdr : Httpz_live.response -> string -> string option -> unit
(** [check_hdr r name v] checks that field [name] of [r] is [v]. *)

val elapsed : (unit -> 'a) -> 'a * float
(** [elapsed f] is [f ()] and the seconds it took. *)

val stats_token : string
(** The bearer token of the servers started with [stats]. *)

val get_stats : string
(** The statistics request with {!stats_token}. *)

val read_proc : string -> string
(** The first line of a [/proc] file (those report a length of 0). *)
