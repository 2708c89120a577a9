(** Request routing: method and path patterns to handlers, compiled once,
    matched without allocating.

    {[
      let r = Router.create () in
      Router.add r Get "/todos" list_todos;
      Router.add r Get "/todos/:id" show_todo;
      Router.add r Put "/todos/:id" update_todo;
      Router.mount r "/assets" static_handler;      (* any method, any depth *)
      Router.mount_router r "/api/v2" api_v2;         (* another builder *)
      let c = Router.compile r in
      let m = Router.Match.create ~max_params:(Router.max_params c) in
      (* per request; [path] is Target.path of the request-target *)
      match Router.find c m meth buf ~path with
      | Found | Head_by_get -> (Router.payload c m) ...   (* Head_by_get: send no body *)
      | Auto_options -> (* 204, Allow: *) Router.write_allow (Router.allow m) out ~off
      | Method_not_allowed -> (* 405 with the same Allow *) ...
      | Not_found -> (* 404, or a redirect if Router.slash_redirect c m buf *) ...
    ]}

    {b Patterns} are described in {!Route_pattern}: literal segments,
    [:name] parameters (one non-empty segment), a last [*name] wildcard
    tail (zero or more segments), a trailing ['/'] as a last empty literal.

    {b The request path} is the raw path of the request-target
    ({!Target.path}), still percent-encoded. It is split on raw ['/']
    first, and only then are segments compared: so [%2F] stays inside the
    segment (and the parameter) it is in, and ['+'] is only a ['+'].
    Literals compare on decoded bytes; parameters are reported as spans of
    the raw bytes, decoded on demand by {!decode_param}. The empty path
    (absolute-form [http://host]) is ["/"]; a path that does not start with
    ['/'] ([*] of [OPTIONS *]) is {!Not_found}.

    {b Precedence: the most specific route wins.} At each depth a literal
    segment beats a parameter, a parameter beats a wildcard tail, a
    wildcard tail beats a mount; where the path ends, a route ending there
    beats a wildcard (matching zero segments), which beats a mount. The
    matcher is a depth-first search in that order {e with backtracking}:
    when a more specific branch dead-ends ([/a/b/c] against [/a/b/x] and
    [/a/:p/c]) the next branch is tried, and parameters bound on the way
    are unbound. The first candidate, in that order, whose path matches
    {e and} which accepts the method wins: so [DELETE /users/me] goes to
    [DELETE /users/:id] even though [GET /users/me] is more specific.
    Only when no path-matching candidate accepts the method is the answer
    405, and [Allow] is then the union of every path-matching candidate's
    methods.

    {b Methods.} A route accepts its method. A GET route also accepts HEAD
    unless the same pattern has a HEAD route ({!Head_by_get}: the server
    answers as for GET without a body). A mount accepts every method,
    including HEAD, OPTIONS and unregistered ones ({!Meth.Other}), which
    routes cannot be registered for. OPTIONS not accepted by any
    candidate, on a path that some candidate matches, is {!Auto_options}.
    Every [Allow] mask includes OPTIONS (the router answers it), and HEAD
    whenever it includes GET.

    {b Trailing slash.} [/a] and [/a/] are different paths and different
    patterns: nothing is stripped or added. On {!Not_found},
    {!slash_redirect} tells whether the other spelling would be routed,
    for a server that wants to redirect (the way a directory redirects).

    {b Empty and dot segments.} The router does not normalise. An empty
    segment ([//]) matches only an empty literal, i.e. the trailing slash
    of a pattern, so [/a//b] is {!Not_found} for [/a/:x/b]; wildcard tails
    keep them. A dot segment ([.] or [..], also spelt [%2e]) is matched by
    no literal (patterns cannot have one), no parameter and no wildcard
    tail: a client resolves them before sending (RFC 3986 §5.2.4), so a
    request carrying one gets {!Not_found} rather than a parameter a
    handler might use as a file name. A mount is the exception: it
    receives its {!remainder} raw and resolves it itself, as the static
    handler does with {!Target.decode_path}, which refuses to climb above
    its root.

    {b Mounts and sub-routers.} [mount r "/assets" h] matches [/assets]
    and every path below it ([/assets/...], not [/assetsx]). A sub-router
    mounted with {!mount_router} has its routes grafted under the prefix
    when {!compile} runs (routes added to it until then are included; a
    cycle is refused). Either way {!prefix_length} is the number of raw
    path bytes the prefix took, and {!remainder} the rest: [""] or a span
    starting with ['/']. Prefixes may hold parameters, not wildcards; a
    trailing ['/'] on a prefix is ignored.

    {b Allocation.} Building ({!create}, {!add}, {!mount},
    {!mount_router}, {!compile}) allocates and raises [Invalid_argument] on
    malformed patterns and duplicate routes. {!find}, every accessor,
    {!decode_param} and {!write_allow} allocate nothing; {!slash_redirect}
    neither. The functions marked "allocates" are conveniences.

    {b Ownership.} A compiled router is immutable and can be shared. A
    {!Match.t} is caller-owned, one per connection or worker. Spans it
    holds point into the buffer given to {!find} and stay valid while the
    caller leaves those bytes alone. *)

type 'a t
(** A router being built. ['a] is the handler (payload) type. *)

type 'a compiled
(** An immutable router, ready to match. *)

val create : unit -> 'a t

val add : 'a t -> Meth.t -> string -> 'a -> unit
(** [add r meth pattern h] routes [meth] requests matching [pattern] to
    [h].
    @raise Invalid_argument on a malformed pattern, on [Meth.Other], or
    when [r] already has a route for [meth] and the same pattern up to
    parameter names ([/a/:x] and [/a/:y] are the same). *)

val mount : 'a t -> string -> 'a -> unit
(** [mount r prefix h] sends every request whose path is [prefix] or lies
    below it, whatever its method, to [h]: the least specific candidate at
    its depth (see precedence).
    @raise Invalid_argument on a malformed prefix, one with a wildcard, or
    a second mount at the same prefix. *)

val mount_router : 'a t -> string -> 'a t -> unit
(** [mount_router r prefix sub] grafts [sub]'s routes and mounts under
    [prefix] at {!compile} time. Conflicts between them and [r]'s own
    routes are reported by {!compile}.
    @raise Invalid_argument on a malformed prefix or one with a wildcard. *)

val compile : 'a t -> 'a compiled
(** [compile r] is the matching structure: a segment trie whose nodes hold
    their literal children (compared by length and bytes), a parameter
    child, and per-method tables of the routes ending there, of the
    wildcard routes and of the mount. [r] can be changed and compiled
    again afterwards.
    @raise Invalid_argument on duplicate routes coming from sub-routers,
    or a sub-router mounted inside itself. *)

val max_params : 'a compiled -> int
(** [max_params c] is the most parameters (wildcards included) one route
    of [c] has: the size a {!Match.t} needs. *)

val route_count : 'a compiled -> int
(** [route_count c] is the number of routes and mounts in [c]. *)

(** Caller-owned match state. *)
module Match : sig
  type t

  val create : max_params:int -> t
  (** [create ~max_params] is a state for routers with at most
      [max_params] parameters per route. Allocates; once per connection. *)
end

type result =
  | Found  (** a route or mount accepts the method: {!payload}, params *)
  | Head_by_get  (** HEAD served by a GET route: answer without a body *)
  | Auto_options
      (** OPTIONS with no OPTIONS route: answer [204] with [Allow:]
          {!allow} *)
  | Not_found  (** no route or mount matches the path: [404] *)
  | Method_not_allowed  (** the path is routed, not for this method: [405] with {!allow} *)

val find : 'a compiled -> Match.t -> Meth.t -> Bigstring.t -> path:Span.t -> result
(** [find c m meth buf ~path] routes a request and records the details in
    [m]. Never raises on any path bytes.
    @raise Invalid_argument if [m] has room for fewer than
    [max_params c] parameters, or [path] is outside [buf]. *)

val result_to_string : result -> string
(** Stable snake_case names (["found"], ["head_by_get"], …). *)

(** {1 After [Found] or [Head_by_get]} *)

val payload : 'a compiled -> Match.t -> 'a
(** [payload c m] is the handler found by the last {!find} on [m] (with
    [c]).
    @raise Invalid_argument after any other result. *)

val param_count : Match.t -> int
(** [param_count m] is the number of parameters the route found binds
    (the wildcard tail is the last one); [0] after other results. *)

val param : Match.t -> int -> Span.t
(** [param m i] is parameter [i] ([0 <= i < param_count m]): raw bytes of
    the path, percent-encoded. A parameter is never empty and never at
    offset 0 of the buffer. A wildcard tail may be empty; it starts after
    the ['/'] that ends the segments before it ([/files/*p] gives [a/b]
    on [/files/a/b], [""] on [/files] and [/files/], ["/x"] on
    [/files//x]).
    @raise Invalid_argument when [i] is out of range. *)

val param_name : 'a compiled -> Match.t -> int -> string
(** [param_name c m i] is the name of parameter [i] (without [:] or [*]).
    @raise Invalid_argument when [i] is out of range. *)

val param_index : 'a compiled -> Match.t -> string -> int
(** [param_index c m name] is the index of the parameter called [name] in
    the route found, or [-1]. *)

val param_by_name : 'a compiled -> Match.t -> string -> Span.t
(** [param_by_name c m name] is that parameter's span, or {!Span.empty}
    (which no parameter span equals) when the route has none by that
    name. *)

val prefix_length : Match.t -> int
(** [prefix_length m] is the number of path bytes taken by the prefix of
    the mount found, or of the sub-router the route found came from
    (nested sub-routers add up); [0] for a top-level route. *)

val remainder : Match.t -> Span.t
(** [remainder m] is the path after {!prefix_length}: empty or starting
    with ['/'] (for [mount "/assets"]: [/assets] gives [""], [/assets/]
    gives ["/"], [/assets/a.css] gives ["/a.css"]). *)

(** {1 Decoding parameters} *)

val decode_param : Bigstring.t -> Span.t -> dst:Bigstring.t -> dst_off:int -> int
(** [decode_param buf s ~dst ~dst_off] is {!Target.decode_segment}:
    percent-decodes a parameter into [dst] and is its length, or a negative
    code for {!Target.decode_error} ([Bad_escape], [Nul_byte], [Bad_char],
    [Too_long]). [%2F] gives a ['/'] byte in the value; ['+'] stays ['+'].
    For a wildcard tail this erases the difference between ['/'] and
    [%2F]: decode its segments one by one, or give it to
    {!Target.decode_path}. Does not allocate. *)

val param_string : Bigstring.t -> Span.t -> (string, Target.error) Stdlib.result
(** [param_string buf s] is the decoded parameter as a string.
    {b Allocates} the string (decoding goes through a buffer of the
    module's, kept between calls): call it from one thread, the event
    loop's, as matching itself is. *)

(** {1 After [Method_not_allowed] or [Auto_options]} *)

val allow : Match.t -> int
(** [allow m] is the set of methods the path accepts, one bit per method
    ({!meth_bit}); [0] after other results. *)

val meth_bit : Meth.t -> int
(** [meth_bit meth] is [meth]'s bit in an {!allow} mask ([0] for
    [Meth.Other]). *)

val allow_length : int -> int
(** [allow_length mask] is the length of the [Allow] value for [mask]. *)

val write_allow : int -> Bigstring.t -> off:int -> int
(** [write_allow mask dst ~off] writes the [Allow] field value for [mask]
    (["GET, HEAD, OPTIONS"]: methods in the order GET, HEAD, POST, PUT,
    DELETE, CONNECT, OPTIONS, TRACE, PATCH, comma-space separated) at
    [off], and is its length, or [-1] (nothing written) when it does not
    fit. At most 60 bytes. Does not allocate. *)

val allow_string : int -> string
(** [allow_string mask] is the same value as a string. {b Allocates.} *)

(** {1 After [Not_found]} *)

val slash_redirect : 'a compiled -> Match.t -> Bigstring.t -> bool
(** [slash_redirect c m buf], after {!find} gave {!Not_found}, is [true]
    when the same path with its trailing ['/'] removed (or, when it has
    none, added) would be routed for the same method: a server can then
    redirect (308) there. Never for ["/"]. [m] still describes
    [Not_found] afterwards. Does not allocate. *)
