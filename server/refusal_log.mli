(** The error-log lines of the guard's refusals ({!Guard}), in nginx's
    error-log layout so that fail2ban's nginx filters
    ([nginx-http-auth], [nginx-limit-req]) and the regexes written for
    nginx read them as they are:
    {v
2026-11-28T19:00:00.123Z [error] 4242#0: *3 user "bob" was not found in "/etc/httpz/users", client: 192.0.2.7, server: a.example, request: "GET /admin/ HTTP/1.1", host: "a.example"
2026-11-28T19:00:00.123Z [error] 4242#0: *3 user "alice": password mismatch, client: 192.0.2.7, server: …
2026-11-28T19:00:00.123Z [error] 4242#0: *5 access forbidden by rule, client: 192.0.2.7, server: …
2026-11-28T19:00:00.123Z [error] 4242#0: *8 limiting requests, excess: 3.000 by zone "limit_req", client: 192.0.2.7, server: …
    v}
    The time is ours (UTC, ISO 8601, which fail2ban reads), then nginx's
    [[level] PID#TID: *CONNECTION message, client: ADDRESS, server: NAME,
    request: "LINE", host: "HOST"]: the client's address (IPv6 as RFC
    5952 writes it), the site's first name ([server]; the [Host] without
    its port when no configuration file named the site), the request
    line and [Host] escaped as nginx does ([\xHH]). [*CONNECTION] is the
    connection's slot number in its worker. The rate limit's [excess] is
    the seconds the client must wait (there is no excess count in
    httpz's limiter); the zone is the [limit_req_zone]'s name
    (["limit_req"] for a limit without a named zone).

    Written at level [error] (so, by default), each by one [write(2)]
    on the error log, without allocating: a flood of refusals costs a
    write each, as in nginx. A request without credentials, or with
    malformed ones, is nginx's [info]-level "no user/password was
    provided for basic authentication", written only at [debug] (a
    browser's first request is not a failed guess); a [503] of a full
    rate table is not written. *)

val forbidden : Ctx.t -> unit
val limited : Ctx.t -> wait:int -> zone:string -> unit
val unauthorized : Ctx.t -> Basic_auth.t option -> unit
(** After {!Basic_auth.check} answered [Refused] or [Missing] for the
    request of the context. *)

val address_text : Bytes.t -> string
(** [address_text ip]: how a line writes the 16-byte address [ip]
    (IPv4-mapped as IPv4). Allocates: for tests. *)
