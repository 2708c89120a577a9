(** The counters at [GET /__httpz/stats]: this worker's, and the totals
    of every worker ({!Totals}). An ordinary handler in
    front of the application, answering only requests that carry the
    configured bearer token ({!Server.config}'s [stats]); any other
    request, that path included, goes to the application. The peer's
    address proves nothing: behind a reverse proxy on the same host every
    client is on the loopback. *)

val path : string
(** ["/__httpz/stats"]: the JSON report. *)

val text_path : string
(** ["/__httpz/stats.txt"]: the same as [name value] lines. *)

val handler :
  credentials:string -> report:(text:bool -> string) -> app:(Ctx.t -> unit) -> Ctx.t -> unit
(** [handler ~credentials ~report ~app] answers the stats requests
    ([GET] or [HEAD] of {!path} or {!text_path}; [credentials]: the
    [Authorization] value they must carry, ["Bearer TOKEN"]: the scheme
    in any case, as RFC 9110 section 11.1 has it, then one or more spaces
    and the token exactly, compared in constant time) with
    [report ~text] (JSON, or [name value] lines when [text]), [no-store];
    every other request goes to [app]. Deciding allocates nothing;
    answering allocates (the report is built per request). *)

val status_handler : report:(text:bool -> string) -> Ctx.t -> unit
(** [status_handler ~report] is what a listener of its own for the
    status serves ({!Config.t.stats_listen}): {!path} and {!text_path}
    without a token (whoever reaches that address may read them: bind it
    to the loopback or an internal network), [404] for anything else. *)
