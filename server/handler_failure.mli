(** What the server says when a handler fails: the operator's log line
    and, in development mode, the 500 page.

    Used by {!Exchange} (the lifecycle {!H1} and {!H2_exchange} share)
    on its error paths only: everything here allocates
    (strings, a [getpeername]) and none of it runs for a request that is
    answered normally. The request's spans are read from the slot's read
    buffer, which holds the head until the response is over. *)

val max_target : int
(** [200]: bytes of the target shown; a longer one is cut and marked
    ["..."]. *)

val describe : Slot.t -> string
(** [describe c] is ["METHOD TARGET from ADDRESS"] for the request in
    progress on [c]: method and target escaped (a byte outside
    [0x21 - 0x7E] or a backslash becomes [\xHH]), the target cut at
    {!max_target}; the client's address from the slot when the access log
    recorded it, else from the socket (["-"] when it has none). *)

val backtrace : Printexc.raw_backtrace -> string
(** [backtrace bt] is the backtrace's text, one frame a line, each line
    indented; [""] when none was recorded (backtraces are recorded when
    [OCAMLRUNPARAM=b] is set, or in development mode, see
    {!Server.config}[.dev_errors]). *)

val log : Slot.t -> exn -> Printexc.raw_backtrace -> answered:bool -> unit
(** [log c e bt ~answered]: the log line for a handler (or continuation)
    of [c] that raised [e]: a second answer ({!Slot.Answered_twice}) or a
    late failure when the response was complete ([answered]), else a
    failure the client gets a 500 (or a close) for; then the request's
    {!Ctx.on_cancel} hooks run ({!Slot.run_cancels}): the handler did not
    answer. Call it before writing the error answer. *)

val incomplete : Slot.t -> unit
(** [incomplete c]: the log line for a handler of [c] that returned
    without a complete response (and is not waiting), then its
    {!Ctx.on_cancel} hooks, as {!log} for a failure. Call it before
    writing the 500. *)

val loopback : Slot.t -> bool
(** [loopback c]: the client is on this host ([127.0.0.0/8], [::1], or
    an IPv4-mapped loopback address). [false] when the socket has no
    peer. *)

val html_escape : string -> string
(** [html_escape s]: ampersand, angle brackets and both quotes as
    character references. *)

val page : exn -> Printexc.raw_backtrace -> string
(** [page e bt]: the development 500 page: an HTML document showing the
    exception and the backtrace, HTML-escaped. *)

val wants_page : Slot.t -> bool
(** [wants_page c]: the development page is for this client: the server
    runs with [dev_errors] and the client is on the {!loopback}. *)

val write_page : Slot.t -> exn -> Printexc.raw_backtrace -> unit
(** [write_page c e bt] answers the request of [c] with a [500] whose body
    is {!page}[ e bt] ([text/html], [Cache-Control: no-store]), in
    whichever protocol [c] speaks: it is written through {!Ctx}, so it
    serves an HTTP/1.1 connection and an HTTP/2 stream alike. Any head
    already started is dropped first: call it only while none of the
    response has left ([not (Exchange.committed c)]). Afterwards
    [resp = Done]; the caller sends it as the server's answer (over
    HTTP/1.1 the connection closes after it: set [close] first for the
    [Connection: close] field). *)
