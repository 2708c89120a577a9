(** Routing for handlers: {!Httpz.Router} put in front of {!Ctx}.

    {[
      let r = Route.router () in
      Route.get r "/" home;
      Route.get r "/todos/:id" (fun c -> Respond.json c (show (Route.param c "id")));
      Route.post_form r "/login" login;          (* CSRF-checked, body read *)
      Route.mount r "/assets" (Static.handler st);
      Server.run config (Route.handler (Route.compile ~csrf r))
    ]}

    {b What {!handler} answers itself.} The method and the path of the
    request-target (without the query) are matched ({!Httpz.Router}'s
    rules: most specific route first, [%2F] stays inside its segment,
    dot segments match nothing); then:
    {ul
    {- a route or mount: its handler; HEAD on a GET route runs the GET
       handler and the server drops the body ([Content-Length] stays);}
    {- OPTIONS with no OPTIONS route: [204] with [Allow];}
    {- a path routed for other methods: [405] with [Allow];}
    {- no route, but the path with its trailing ['/'] removed (or added)
       has one, and the path does not start with [//]: [308 Permanent
       Redirect] there, query kept (308 keeps the method and body, so a
       POST lands where it was meant to; off with [~slash_redirect:false]);}
    {- otherwise [404]; a malformed target, or a parameter that does not
       decode ([%zz], [%00]): [400]; [OPTIONS *]: [204] with the
       methods any route accepts.}}
    The error answers among them (404, 405, 400) and form routes' 403 go
    through the router's error renderer ([~errors] at {!compile}), else
    the server's ([Server.config.errors]), else they are [text/plain]
    bodies as {!Respond.error} writes them ({!Errors}). A 405 keeps its
    [Allow] whatever renders it. {!not_found} replaces only the last
    case, the 404: the 405s, OPTIONS, the slash redirects and the 400s
    stay the router's (a catch-all [mount r "/"] would take them all).

    {b Form routes} ({!form}, {!post_form}) read the whole body (up to
    [Server.config.max_body]) before their handler runs, and pass
    {!Csrf.check} first: a failure is [403] with the reason. They need
    [~csrf] at {!compile}. With a session store read off the loop
    ({!Session.offloaded}) the check waits for the session
    ({!Csrf.check_then}), and the request is matched again before its
    handler runs, so {!param} works there as in any handler.

    {b Parameters} are read with {!param} (decoded, allocates) or
    {!param_span} (raw span of {!Ctx.buffer}, no allocation) {e during
    the handler's synchronous call}: the match state is one per
    {!compiled} router (per worker), and the next request overwrites it.
    Read (copy) them before {!Ctx.sleep}, {!Ctx.flush}, {!Ctx.read_body}
    or any other wait; from a continuation they raise [Invalid_argument].

    {b Allocation.} Building allocates. {!handler} on a route without
    parameters, and the matching {!find} always, allocate nothing beyond
    what the route's handler does; the automatic answers may allocate. *)

open Httpz

type router
(** Routes being registered. *)

val router : unit -> router

val add : router -> Meth.t -> string -> (Ctx.t -> unit) -> unit
(** [add r meth pattern h]: patterns as in {!Httpz.Route_pattern}
    ([/todos/:id], [/files/*rest], trailing ['/'] significant).
    @raise Invalid_argument as {!Httpz.Router.add}. *)

val get : router -> string -> (Ctx.t -> unit) -> unit
val post : router -> string -> (Ctx.t -> unit) -> unit
val put : router -> string -> (Ctx.t -> unit) -> unit
val patch : router -> string -> (Ctx.t -> unit) -> unit
val delete : router -> string -> (Ctx.t -> unit) -> unit

val form : router -> Meth.t -> string -> (Ctx.t -> unit) -> unit
(** [form r meth pattern h]: a form route (see above). *)

val post_form : router -> string -> (Ctx.t -> unit) -> unit

val mount : router -> string -> (Ctx.t -> unit) -> unit
(** [mount r prefix h] sends [prefix] and everything below it, any
    method, to [h], which sees the whole request. {!remainder} is the
    rest of the path, {!prefix_length} the prefix's length (the static
    handler, with its default [mount], serves the rest: the prefix is
    given once). *)

val mount_router : router -> string -> router -> unit
(** [mount_router r prefix sub] grafts [sub]'s routes under [prefix]
    ([sub]'s {!not_found} is not grafted: the outer router's applies). *)

val not_found : router -> (Ctx.t -> unit) -> unit
(** [not_found r h]: [h] answers a request that no route or mount of [r]
    matches for any method, when no slash redirect applies: the custom
    404 (a JSON error, a page; it may answer another status). It runs as
    a route's handler would, without parameters ({!param} raises). A
    second call replaces the first. *)

type t
(** A compiled router with its per-worker match state. *)

val compile : ?csrf:Csrf.t -> ?slash_redirect:bool -> ?errors:Errors.t -> router -> t
(** [errors]: the renderer of this router's error answers (see above),
    ahead of the server's; the answers of its routes' handlers
    ({!Respond.error}, a static handler's) use the server's.
    @raise Invalid_argument on conflicting routes, or form routes without
    [csrf]. *)

val handler : t -> Ctx.t -> unit
(** The handler to give {!Server.run}. *)

val find : t -> Meth.t -> Bigstring.t -> Span.t -> Router.result
(** [find t meth buf target] splits the request-target and matches it as
    {!handler} does, without answering ([Not_found] for a malformed
    target). Does not allocate. *)

(** {1 In a route's handler} *)

val param : Ctx.t -> string -> string
(** [param c name] is the parameter [name] of the route being handled,
    percent-decoded ([%2F] is a ['/'] byte, ['+'] stays ['+']). Allocates.
    @raise Invalid_argument when the route has no such parameter or the
    handler is not in its synchronous call. *)

val param_span : Ctx.t -> string -> Span.t
(** [param_span c name] is its raw span of {!Ctx.buffer} (decode with
    {!Httpz.Router.decode_param}); does not allocate.
    @raise Invalid_argument as {!param}. *)

val remainder : Ctx.t -> Span.t
(** [remainder c] is the path below the mount's prefix (see
    {!Httpz.Router.remainder}). *)

val prefix_length : Ctx.t -> int
(** [prefix_length c] is the number of raw path bytes taken by the prefix
    of the mount (or sub-router) whose handler runs now for [c]
    ({!Httpz.Router.prefix_length}), and [0] for a top-level route or
    outside a route handler's synchronous call: never raises, does not
    allocate. The static handler reads it to serve the path below its
    mount ({!Httpz_static.Static}'s [mount] decision). *)
