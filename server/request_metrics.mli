(** What {!Totals} counts of each response: its site, its protocol and
    how long the request took. Called once per response, where the access
    log's line is written; does not allocate.

    {b The site} is found from the request's [Host] (HTTP/2: its
    [:authority]) by the function the configuration gives ({!set_sites}),
    the same one that picks the site for the handler; a request without
    [Host], or whose head could not be parsed, counts in the site such
    requests are served by; a [Host] no site takes (refused with 421 or
    404) counts as ["(other)"]; the status listener's own answers as
    ["(status)"]. Without {!set_sites} (the server of [httpz serve DIR], or
    an application's) every request counts in ["default"].

    {b The protocol} is [http1.0], [http1.1] (a head that could not be
    parsed too: the answer is HTTP/1.1) or [h2].

    {b The duration} runs from the first byte of the request's head read
    ({!Slot.stamp}: slots are stamped when an access log or a status
    endpoint wants it, {!Totals.timed}) to now, one
    [CLOCK_MONOTONIC] read; a response with no stamp (none was taken)
    counts in the first bucket. *)

val set_sites : names:string array -> find:(Httpz.Bigstring.t -> Httpz.Span.t -> int) -> no_host:int -> unit
(** [set_sites ~names ~find ~no_host]: the sites of the configuration in
    their order ([names.(i)] the label of site [i]), [find buf host] the
    index of the site of the [Host] span [host] of [buf] ([-1]: none, it
    must not allocate), [no_host] the one of a request without [Host].
    Call in the process that makes the {!Totals} table (before the
    workers fork), at start and after each reload: the workers forked
    afterwards count by these sites. Allocates. *)

val response : Totals.t -> int -> Slot.t -> parsed:bool -> complete:bool -> status_listener:bool -> unit
(** [response t row c ~parsed ~complete ~status_listener] counts the
    response of [c] in [row] of [t] ({!Totals.exchange}): [parsed], its
    request's head was parsed; [complete], it was handed whole to the
    socket; [status_listener], it was answered on the status listener.
    For a process with a reader of the totals ({!Totals.timed}); without
    one (no status endpoint, the table is the worker's own) the caller
    counts only the server's totals ({!Totals.response}), not by site.
    The bytes by site are the body's that left, as the access log counts
    them; the server's total, the bytes handed to the socket (HTTP/2: the
    body's, its head went in the connection's HEADERS frames). Does not
    allocate. *)
