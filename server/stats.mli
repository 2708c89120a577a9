(** The worker's counters at [GET /__httpz/stats]: an ordinary handler in
    front of the application, answering only requests that carry the
    configured bearer token ({!Server.config}'s [stats]); any other
    request, that path included, goes to the application. The peer's
    address proves nothing: behind a reverse proxy on the same host every
    client is on the loopback. *)

val path : string

val handler : credentials:string -> report:(unit -> string) -> app:(Ctx.t -> unit) -> Ctx.t -> unit
(** [handler ~credentials ~report ~app] answers the stats requests
    ([credentials]: the [Authorization] value they must carry, ["Bearer
    TOKEN"]) with [report ()], a JSON object, as [application/json],
    [no-store]; every other request goes to [app]. Deciding allocates
    nothing; answering allocates (the report is built per request). *)

