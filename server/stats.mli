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

val metrics_path : string
(** ["/__httpz/metrics"]: the totals in Prometheus's text exposition
    format ({!Totals.prometheus}); on the status listener, [/metrics]
    too (Prometheus's default path). *)

type format = Json | Text | Prometheus

val handler :
  credentials:string -> report:(format -> string) -> app:(Ctx.t -> unit) -> Ctx.t -> unit
(** [handler ~credentials ~report ~app] answers the stats requests
    ([GET] or [HEAD] of {!path}, {!text_path} or {!metrics_path}; [credentials]: the
    [Authorization] value they must carry, ["Bearer TOKEN"]: the scheme
    in any case, as RFC 9110 section 11.1 has it, then one or more spaces
    and the token exactly, compared in constant time) with
    [report format] (JSON, [name value] lines, or Prometheus's format), [no-store];
    every other request goes to [app]. Deciding allocates nothing;
    answering allocates (the report is built per request). Making it
    turns on the timing of requests ({!Totals.time_requests}). *)

val status_handler : report:(format -> string) -> Ctx.t -> unit
(** [status_handler ~report] is what a listener of its own for the
    status serves ({!Config.t.stats_listen}): {!path}, {!text_path},
    {!metrics_path} and [/metrics] without a token (whoever reaches that address may read them: bind it
    to the loopback or an internal network), [404] for anything else.
    Making it turns on the timing of requests ({!Totals.time_requests}). *)
