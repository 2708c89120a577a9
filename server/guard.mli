(** Access control in front of an application: allow and deny by client
    address ({!Address_rules}), a request rate per client
    ({!Rate_limit}), and HTTP Basic authentication ({!Basic_auth}). A
    handler wrapper like {!Stats}: it answers a request that fails a
    check and passes every other one to the application unchanged.

    The checks run cheapest first, as nginx's phases do:
    + address rules: the first that contains the client decides; a denied
      client gets [403 Forbidden] (no rate or password work spent on it);
    + the rate: a client over its rate gets [429 Too Many Requests] with
      [Retry-After: SECONDS] (password guesses are rate-limited too);
    + the password: no or wrong credentials get [401 Unauthorized] with
      [WWW-Authenticate: Basic realm="REALM", charset="UTF-8"].

    A request that passes every check costs no allocation (its
    credentials remembered, see {!Basic_auth}); answers to refused ones
    are short [text/plain] bodies. Each refusal is logged at debug level
    ({!Log}: status, client, target), and only then formatted.

    The per-client connection limit is not here: it acts when a
    connection is accepted, before any request ({!Config.t.conn_limit},
    {!Conn_limit}).

    {b State.} {!create} makes the rate table and the password cache;
    made before the workers fork, each worker then has its own copy. *)

type auth = { realm : string; user_file : string }
(** [user_file]: [user:hash] lines ({!Basic_auth.load}). *)

type rate = { per_second : float; burst : int }
(** A client may send [burst] requests at once, then [per_second] a
    second ([per_second] may be below 1: [0.5] is one every 2 s). *)

type config = {
  access : Address_rules.rule list;  (** in order; [[]]: everyone *)
  rate : rate option;
  auth : auth option;
}
(** What a site, or a location of a site, may carry: the plain value a
    configuration file maps to. [--access], [--limit-rate] and
    [--limit-burst], [--auth-file] and [--auth-realm] of [httpz serve]
    make one. *)

val none : config
(** No rule, no rate, no password. *)

val is_none : config -> bool

type t

val create : ?rate_entries:int -> config -> (t, string) result
(** [create config] compiles the rules, makes the rate table
    ([rate_entries] clients, default 16384: 640 KiB) and reads the user
    file. [Error] names the first problem (a malformed address, a bad
    rate, the user file's line). Allocates. *)

val handler : t -> app:(Ctx.t -> unit) -> Ctx.t -> unit
(** [handler t ~app] checks every request, then [app] runs the ones that
    pass. Deciding allocates nothing (see above). *)

val admit : t -> Ctx.t -> bool
(** [admit t c] runs the checks on the request of [c]: [true] when it
    passes (nothing is answered: the caller answers it), else [false]
    and the refusal (403, 429 or 401) is answered. What {!handler} does
    before it calls the application, for a caller that has already picked
    the guard (a location of a configuration file). Does not allocate for
    a request that passes. *)

val under : prefix:string -> t -> app:(Ctx.t -> unit) -> Ctx.t -> unit
(** [under ~prefix t ~app] checks only requests whose path is [prefix]
    or below it ([/admin] guards [/admin] and [/admin/x], not
    [/administrator]); others go to [app] unchecked. The path is compared
    as the static handler resolves it: percent-decoded, dot segments and
    empty segments resolved ({!Httpz.Target.decode_path}), so
    [/%61dmin/] and [//x/../admin/] are under [/admin] too; a target that
    does not decode is checked. Does not allocate. *)

type verdict = Pass | Denied | Limited of int | Unauthenticated
(** For tests: what {!decide} found ([Limited s]: retry after [s]
    seconds). *)

val decide : t -> addr:Bytes.t -> now_ns:int -> Httpz.Bigstring.t -> Httpz.Span.t -> verdict
(** [decide t ~addr ~now_ns buf authorization] runs the checks for a
    client at [addr] (16 bytes) at monotonic [now_ns], with its
    [Authorization] value ({!Httpz.Span.empty} when absent). Allocates
    only [Limited] and a password hash not remembered. *)
