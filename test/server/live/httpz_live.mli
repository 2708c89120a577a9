(** A live server in a child process, and a raw client to talk to it.

    For the OCaml suites that test the server over real sockets
    ([test/server/loop], [test/server/static]); the Python suites have
    [test/e2e/harness.py] for the same job. Only the public server API is
    used ([Server], [Ctx]). Everything here allocates freely: it runs in
    the test process, never in the server's loop.

    Failures are Alcotest failures ([Alcotest.fail]): a server that does
    not start or exit in time, a client read that times out, a response
    that does not parse. *)

(** {1 Servers} *)

type server = {
  pid : int;  (** the child: the server process (the supervisor with several workers) *)
  port : int;  (** the port it listens on, learnt through [on_listen] *)
  stderr_file : string;
      (** a temporary file holding the child's stderr; removed by {!stop},
          {!kill} and {!with_server} *)
}

val start_timeout : float
(** [5.0]: seconds a child has to report its port. *)

val spawn : (on_listen:(int -> unit) -> int) -> server
(** [spawn serve] forks a child whose stderr goes to a fresh temporary file
    and which runs [serve ~on_listen]: [serve] starts the server with
    [on_listen] as its [Server.config.on_listen], and its result is the
    child's exit code (an exception escaping [serve] is printed and exits
    3). The child always leaves with [Unix._exit]: it never returns into
    the test runner, so neither the tests nor [at_exit] run twice. Returns
    once the port is known; fails if the child exits or stays silent for
    {!start_timeout} seconds (the child is then killed, and its stderr is
    in the failure message). *)

val start : ?config:Httpz_server.Server.config -> (Httpz_server.Ctx.t -> unit) -> server
(** [start ~config handler] is {!spawn} of [Server.run] with [config]
    (default [Server.default_config]) listening on 127.0.0.1 at a port the
    kernel picks ([host] and [port] are overridden; [listen], when given,
    still applies). *)

val wait_exit : ?timeout:float -> int -> Unix.process_status
(** [wait_exit pid] reaps [pid], polling; after [timeout] seconds (default
    15) it kills it with [SIGKILL] and fails. *)

val stderr_of : server -> string
(** [stderr_of s] is what the child wrote to stderr so far. *)

val stop : server -> string
(** [stop s] sends [SIGTERM], waits ({!wait_exit}), removes the stderr file
    and returns its content; fails, with that content, unless the child
    exited 0. *)

val kill : server -> unit
(** [kill s] sends [SIGKILL], reaps the child and removes the stderr file.
    Never raises: it is safe on a child already reaped or a file already
    removed. *)

val killing : server -> (unit -> 'a) -> 'a
(** [killing s f] is [f ()]; if [f] raises, the server's stderr is printed
    and [s] is {!kill}ed before the exception goes on, so a failed test
    leaves no process behind. *)

val with_server :
  ?config:Httpz_server.Server.config -> (Httpz_server.Ctx.t -> unit) -> (server -> 'a) -> 'a
(** [with_server ~config handler f] is [f s] for [s = start ~config handler],
    then {!stop} (which fails unless the server exits 0); {!killing} if [f]
    raises. *)

val run_in_child : stderr_file:string -> (unit -> int) -> Unix.process_status
(** [run_in_child ~stderr_file f] forks a child with stderr appended to
    [stderr_file] that exits with [f ()] (3 if it raises), and waits for it
    ({!wait_exit}): for servers expected to fail at start. *)

(** {1 A raw client}

    A blocking socket whose reads and writes time out, and the bytes read
    but not consumed yet. Every read appends to the pending bytes and every
    [take] consumes from their front, so several responses on one
    connection (pipelining, keep-alive) are read one after the other with
    nothing lost between them. *)

type client

val io_timeout : float
(** [5.0]: seconds a client read or write may block. *)

val connect : int -> client
(** [connect port] connects to 127.0.0.1:[port], with {!io_timeout} on
    both directions. *)

val fd : client -> Unix.file_descr
(** The socket, for socket options, [select] and [getsockname]. *)

val pending : client -> string
(** The bytes read and not consumed yet. *)

val close : client -> unit
(** Closes the socket; never raises. *)

val with_client : int -> (client -> 'a) -> 'a
(** [with_client port f] is [f] on a fresh {!connect}, closed after. *)

val send : client -> string -> unit
(** [send c s] writes all of [s]; [Unix.Unix_error] on a reset or a timeout. *)

val recv_more : client -> bool
(** [recv_more c] reads once more into the pending bytes: [false] at the end
    of the stream (or a reset). Fails on a timeout. *)

val take : client -> int -> string
(** [take c n] consumes the next [n] bytes; fails if the stream ends first. *)

val take_line : client -> string
(** [take_line c] consumes up to and including the next CRLF and is the
    line without it; fails if the stream ends first. *)

val read_until_eof : client -> string
(** Consumes everything up to the end of the stream. *)

val at_eof : client -> bool
(** [at_eof c] is [true] when nothing is pending and the peer has closed
    (it may wait up to {!io_timeout} for either). *)

(** {1 Responses} *)

type response = {
  status : int;
  headers : (string * string) list;  (** names lowercased, values trimmed, in order *)
  body : string;  (** decoded: without chunk framing *)
}

val read_head : client -> int * (string * string) list
(** [read_head c] consumes a status line and the header fields up to the
    empty line. Fails on a status line that is not [HTTP/1.x NNN ...] or a
    field line without a colon. *)

val read_response : ?head:bool -> client -> response
(** [read_response c] consumes one response: the head, then the body by
    [Content-Length], else chunked (trailers consumed and dropped), else up
    to the end of the stream. With [~head:true] (the answer to a HEAD) and
    for 1xx, 204 and 304 there is no body. *)

val header : response -> string -> string option
(** [header r name] is the first value of field [name] (any case). *)

val header_exn : response -> string -> string
(** As {!header}; fails when the field is missing. *)

val exchange : ?head:bool -> int -> string -> response
(** [exchange port raw] sends [raw] (one request asking
    [Connection: close]) on a fresh connection, reads the response and
    checks that the server then closes the connection with nothing more:
    a body longer than its [Content-Length], or a body after a HEAD, fails. *)

val get : string -> string
(** [get path] is [GET path HTTP/1.1] with [Host: t] and nothing else. *)

(** {1 The statistics endpoint} *)

val stats_request : token:string -> string
(** [GET /__httpz/stats] with the bearer [token] ([Server.config.stats]). *)

val stats_field : string -> string -> int
(** [stats_field json name] is the integer field [name] of a statistics
    answer; fails when it is missing. *)
