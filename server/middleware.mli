(** Middleware: wrappers around a handler that see the request before it
    runs and the response after (its head, its status, the bytes that
    left, the time it took), whether the handler answers at once or later
    ({!Ctx.suspend}, {!Ctx.flush}, {!Ctx.offload}).

    {[
      let metrics = Middleware.Route_metrics.create () in
      let r = Route.router () in
      Route.get r "/todos/:id" show;
      Route.get r "/metrics" (Middleware.Route_metrics.handler metrics);
      let app =
        Middleware.apply
          [ Middleware.Request_id.middleware ();
            Middleware.Security_headers.(middleware default);
            Middleware.Cors.(middleware { default with origins = Origins [ "https://app.example" ] });
            Middleware.Route_metrics.middleware metrics ]
          (Route.handler (Route.compile r))
      in
      Server.run config app
    ]}

    {b How a wrapper sees the response.} A handler writes its own head
    ({!Ctx.start}) and may finish long after it returned, so code after
    [next c] in a wrapper sees neither. A middleware registers hooks
    instead: {!Ctx.on_head} (add fields as the head ends) and
    {!Ctx.on_complete} (status, bytes, time, once the exchange is over,
    cancelled or cut included). Hooks belong to the request and are
    forgotten when it ends: they never run for the next request on the
    same keep-alive connection or HTTP/2 exchange slot.

    {b Allocation.} Everything here is built once, at start-up: composing
    allocates the wrappers and their hooks, a request allocates nothing
    through an empty chain (it {e is} the handler), a chain of {!make}
    wrappers without functions, {!Security_headers}, {!Cors} for an
    actual request from a listed origin and {!Route_metrics} (after its
    first request per route). {!Request_id} allocates the id (one string
    per request); a {!Cors.Allow_if} predicate, a CORS preflight and
    {!Route_metrics.text} allocate.

    {b Order.} [apply [a; b; c] h] is [a (b (c h))]: [a] sees the request
    first. Head hooks run in registration order (outermost first),
    completion hooks innermost first. {!Cors} answers preflights itself:
    put it outside {!Route.handler}, whose automatic [OPTIONS] answer
    would otherwise take them; put {!Route_metrics} inside any wrapper
    that answers by itself if those answers are to be counted, and outside
    the router (it reads the route's pattern after it ran).

    {b Workers.} A middleware's state (metrics, the request-id counter)
    is per worker process: build it before {!Server.run}, and each worker
    gets its own copy when it forks. *)

type handler = Ctx.t -> unit

type t = handler -> handler
(** [m next] is a handler that does its part and calls [next] (or
    answers by itself). Apply it once, at start-up. *)

val identity : t

val compose : t list -> t
(** [compose [a; b]] is [fun h -> a (b h)]; [compose []] is {!identity}. *)

val apply : t list -> handler -> handler
(** [apply l h] is [compose l h]. *)

val make :
  ?before:(Ctx.t -> bool) -> ?head:(Ctx.t -> unit) -> ?complete:(Ctx.t -> unit) -> unit -> t
(** [make ?before ?head ?complete ()] is a middleware that, per request,
    registers [head] with {!Ctx.on_head} and [complete] with
    {!Ctx.on_complete}, then runs [before c], which answers [false] when it
    answered the request itself (the handler then does not run). The
    functions are made once by the caller: nothing is allocated per
    request. [make ()] is {!identity}. *)

(** Cross-origin resource sharing (the Fetch standard's CORS protocol).

    A {e preflight} ([OPTIONS] with [Origin] and
    [Access-Control-Request-Method]) is answered here, never passed on:
    [204] with [Access-Control-Allow-Origin], [-Allow-Methods],
    [-Allow-Headers], [-Max-Age] (and [-Allow-Credentials]) for an
    allowed origin, [403] for any other (the browser would refuse it
    anyway; the status says why). Any other request goes to the handler,
    and its answer gets [Access-Control-Allow-Origin] (the origin echoed,
    or ["*"] for {!Any} without credentials) and [Access-Control-Expose-Headers]
    when its [Origin] is allowed; [Vary: Origin] whenever the answer
    depends on the origin, allowed or not, so a shared cache keeps them
    apart. Origins are compared whole ([scheme://host:port]), ASCII
    case-insensitively. *)
module Cors : sig
  type origins =
    | Any  (** every origin *)
    | Origins of string list  (** exactly these, e.g. ["https://app.example"] *)
    | Allow_if of (string -> bool)  (** a predicate on the [Origin] value (allocates it) *)

  type config = {
    origins : origins;
    methods : Httpz.Meth.t list;  (** [Access-Control-Allow-Methods] *)
    headers : string list;
        (** [Access-Control-Allow-Headers]; ["*"] in it: whatever the
            preflight asks for is echoed *)
    expose : string list;  (** [Access-Control-Expose-Headers] *)
    credentials : bool;  (** [Access-Control-Allow-Credentials: true] *)
    max_age : int;  (** [Access-Control-Max-Age] in seconds; negative: none *)
  }

  val default : config
  (** No origin allowed; GET, HEAD, POST; no extra header; no
      credentials; 600 s. *)

  val middleware : config -> t
  (** @raise Invalid_argument for an origin, method or header list that
      is not a field value, and for [Any] with [credentials] (any site
      could read a signed-in user's answers: list the origins, or decide
      with [Allow_if]). *)
end

(** Security headers on every response the handler writes: HSTS only on
    TLS connections ({!Ctx.secure}; a TLS server's plain listener gets
    none), [X-Content-Type-Options: nosniff],
    [X-Frame-Options], [Content-Security-Policy], [Referrer-Policy], and
    fields of one's own. Made once into two prepared sets
    ({!Httpz.Prepared_fields}), copied into each head: 0 words.
    [Config]'s [tls.hsts] also writes HSTS (on every https response, the
    server's own included): set one or the other. A handler that writes
    one of these fields itself sends it twice. *)
module Security_headers : sig
  type config = {
    hsts : string option;  (** [Strict-Transport-Security] value, TLS only *)
    content_type_options : bool;
        (** [X-Content-Type-Options: nosniff]: off by default, as
            [Server.config.headers] sends it on every response unless
            told otherwise (the server's own answers included) *)
    frame_options : string option;  (** [X-Frame-Options] *)
    content_security_policy : string option;
    referrer_policy : string option;
    others : (string * string) list;
  }

  val default : config
  (** HSTS [max-age=31536000; includeSubDomains], [X-Frame-Options:
      DENY], [Content-Security-Policy: frame-ancestors 'none'] (the same
      for browsers that read only CSP), [Referrer-Policy:
      strict-origin-when-cross-origin]; no nosniff (see above). *)

  val middleware : config -> t
  (** @raise Httpz.Response.Invalid_field for a value that is not a
      field value; [Invalid_argument] for a field the server writes. *)
end

(** A request id per request: the client's [X-Request-Id] when it is
    valid (1 to [max_length] bytes of [A-Za-z0-9-_.:+/=@]) and trusted,
    else a new one: a per-worker random prefix (12 characters from the
    kernel, made at the worker's first request) and a counter, unique
    across workers and restarts. It is sent back as [X-Request-ID] and
    readable by the handler ({!get}) until the request ends. *)
module Request_id : sig
  val middleware : ?trust_incoming:bool -> ?max_length:int -> unit -> t
  (** [trust_incoming] (default [true]): reuse a valid incoming id (behind
      a proxy that sets it); [max_length] default 128. *)

  val get : Ctx.t -> string
  (** The request's id; [""] outside the middleware. *)

  val valid : ?max_length:int -> string -> bool
  val generate : unit -> string
end

(** Per-route request counts by status class and a latency histogram,
    keyed by the route's {e pattern} ([/todos/:id], {!Ctx.route_pattern}),
    never the raw path: requests no route ran for (404, 405, automatic
    OPTIONS, redirects) are counted under [route="(unmatched)"]. A
    request cancelled before it answered (the client left, the handler
    timeout: the server's 503 is not the handler's) counts under
    [status="none"]; one whose response was cut also counts in
    [incomplete_total]. A request its wrapper never saw (answered by a
    wrapper outside it, or by the server before any handler ran) is not
    counted. The
    time is from the wrapper's call to the response's end
    ({!Ctx.elapsed_ns}). Counts are this worker's. *)
module Route_metrics : sig
  type t

  val create : ?buckets:float array -> ?name:string -> unit -> t
  (** [buckets]: histogram upper bounds in seconds, increasing (default
      1 ms to 10 s); [name]: the metric prefix (default ["httpz_route"]).
      @raise Invalid_argument otherwise. *)

  val middleware : t -> (Ctx.t -> unit) -> Ctx.t -> unit

  type row = {
    route : string;
    by_class : int array;  (** [.(0)]: no response; [.(k)]: [k]xx *)
    incomplete : int;
    count : int;
    sum_seconds : float;
    buckets : (float * int) array;  (** cumulative, the last bound [infinity] *)
  }

  val rows : t -> row list
  (** Routes seen, sorted by pattern. *)

  val text : t -> string
  (** The Prometheus text exposition: [NAME_requests_total{route,status}],
      [NAME_incomplete_total{route}], [NAME_duration_seconds] histogram. *)

  val handler : t -> Ctx.t -> unit
  (** Answers {!text}, [text/plain; version=0.0.4], [no-store]. *)
end
