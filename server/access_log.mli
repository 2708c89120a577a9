(** The access log, in Common Log Format:
    {v
127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] "GET /index.html HTTP/1.1" 200 2326
    v}
    (host, identity and user — always [-], time in UTC, request line,
    status, body bytes or [-] when none).

    Lines are formatted into a worker-owned buffer without allocating and
    written to the file descriptor whole, by {!flush} (the loop calls it
    once a second and at exit) or when the buffer is full. A [write] never
    carries a partial line, so workers sharing one log file never
    interleave inside a line. The write is a plain blocking [write(2)]:
    a log on a slow pipe slows the worker down rather than losing lines.

    The request line is copied from the request head, with backslash, double quote and
    bytes outside [0x20 - 0x7E] escaped as [\xHH] (as Apache does), and cut
    at 8 KiB. A request whose head could not be parsed is logged as ["-"]:
    its bytes are not trusted to be a request line. *)

type t

val create : fd:int -> t
(** [create ~fd] logs to [fd]; [fd < 0] is a disabled log on which every
    call is a no-op. Allocates (a 64 KiB buffer). *)

val enabled : t -> bool

val reopen : t -> string -> (unit, string) result
(** [reopen t path] flushes [t] and makes its descriptor the file at
    [path] (opened for appending, created 0644 if missing), as after a log
    rotation; on [Error] nothing changes. Allocates. *)

val line :
  t ->
  now:int ->
  peer:Httpz.Bigstring.t ->
  peer_len:int ->
  src:Httpz.Bigstring.t ->
  req_off:int ->
  req_len:int ->
  status:int ->
  bytes:int ->
  unit
(** [line t ~now ~peer ~peer_len ~src ~req_off ~req_len ~status ~bytes]
    appends one line: the client address is the first [peer_len] bytes of
    [peer] (["-"] when [0]), the request line is [src] at [req_off], of
    [req_len] bytes ([req_len < 0] logs ["-"]), the time is Unix time [now].
    Does not allocate. *)

val pending : t -> bool
(** [pending t] is [true] when lines wait in the buffer. *)

val flush : t -> unit
(** [flush t] writes the buffered lines. Errors are ignored (the log must
    not stop the server). *)
