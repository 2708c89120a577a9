(** Access control in front of an application: allow and deny by client
    address ({!Address_rules}), a request rate per client
    ({!Rate_limit}), and HTTP Basic authentication ({!Basic_auth}). A
    handler wrapper like {!Stats}: it answers a request that fails a
    check and passes every other one to the application unchanged.

    The checks run cheapest first, as nginx's phases do:
    + address rules: the first that contains the client decides; a denied
      client gets [403 Forbidden] (no rate or password work spent on it);
    + the rate: a client over its rate gets [429 Too Many Requests] (or
      the zone's [status], nginx's [limit_req_status]; nginx's default is
      [503], httpz keeps [429]) with
      [Retry-After: SECONDS] (password guesses are rate-limited too); a
      client the rate table has no room for gets [503 Service
      Unavailable] with [Retry-After: SECONDS] (as nginx when a
      [limit_req] zone is exhausted; {!Rate_limit});
    + the password: no or wrong credentials get [401 Unauthorized] with
      [WWW-Authenticate: Basic realm="REALM", charset="UTF-8"].

    {!admit} (and {!handler}) answer a refusal themselves; a caller that
    answers refusals its own way (a configuration's [error_page]) takes
    the verdict from {!check}, and may still have {!refuse} answer it.

    A request that passes every check costs no allocation (its
    credentials remembered, see {!Basic_auth}); answers to refused ones
    are short [text/plain] bodies, or the application's error renderer's
    ({!Errors}). Each refusal is logged at debug level
    ({!Log}: status, client, target), and only then formatted.

    The per-client connection limit is not here: it acts when a
    connection is accepted, before any request ({!Config.t.conn_limit},
    {!Conn_limit}).

    {b Keys.} A client is its address by default; a zone may key its
    requests by a request header's value, a cookie's, or the site (one
    count for all its clients). A request without that header or cookie,
    or with it empty, is not rate-limited (as nginx accounts no empty
    key): pair such a zone with an address-keyed one where that matters.

    {b State.} {!create} makes the rate table (a {!Limit_zone}: memory
    shared by the processes forked after it, so every worker counts in
    the same table) and the password cache; made before the workers
    fork, each worker has its own password cache and the one rate
    table. An HTTP/2 connection's streams are requests: each is counted. *)

type auth = { realm : string; user_file : string }
(** [user_file]: [user:hash] lines ({!Basic_auth.load}). *)

type rate = { per_second : float; burst : int }
(** A client may send [burst] requests at once, then [per_second] a
    second ([per_second] may be below 1: [0.5] is one every 2 s). *)

type key =
  | Address  (** the client's address (an IPv6 client's /64): [$binary_remote_addr] *)
  | Header of string  (** a request header's value: [$http_NAME] *)
  | Cookie of string  (** a cookie's value: [$cookie_NAME] *)
  | Site of string  (** the site's name: one count for all its clients, [$server_name] *)

type zone = {
  name : string;
      (** [""]: the guard's own table; else a zone that every guard
          naming it counts in (nginx's [limit_req zone=NAME]) *)
  key : key;
  entries : int;  (** the table's size (clients limited at once) *)
  status : int;  (** the answer over the rate: a 4xx or 5xx, default [429] *)
}

type config = {
  access : Address_rules.rule list;  (** in order; [[]]: everyone *)
  rate : rate option;
  auth : auth option;
  zone : zone;  (** where and how [rate] counts; {!default_zone} *)
}
(** What a site, or a location of a site, may carry: the plain value a
    configuration file maps to. [--access], [--limit-rate] and
    [--limit-burst], [--auth-file] and [--auth-realm] of [httpz serve]
    make one. *)

val default_zone : zone
(** Unnamed, by address, 16384 entries (512 KiB), [429]. *)

val none : config
(** No rule, no rate, no password, {!default_zone}. *)

val is_none : config -> bool

type t

val create :
  ?rate_entries:int -> ?zones:(id:string -> entries:int -> Limit_zone.t) -> config -> (t, string) result
(** [create config] compiles the rules, makes the rate table
    ([rate_entries] clients, default the zone's [entries]) and reads the
    user file. With [zones], the table is [zones ~id ~entries] instead of
    a new one: [id] names the zone and its key (an unnamed zone: a
    space, then its rate, burst and key), so that a configuration read again may keep
    the tables that did not change ({!Limit_zone.reuse}). [Error] names
    the first problem (a malformed address, a bad rate, a status that is
    not 4xx or 5xx, the user file's line, no random bytes from the
    kernel for the rate table's secret). Allocates. *)

val handler : t -> app:(Ctx.t -> unit) -> Ctx.t -> unit
(** [handler t ~app] checks every request, then [app] runs the ones that
    pass. Deciding allocates nothing (see above). *)

type verdict =
  | Admit  (** every check passed *)
  | Forbidden  (** the address rules deny the client: [403] *)
  | Unauthorized  (** no or wrong credentials: [401] *)
  | Too_many  (** over the rate: [429], or the zone's [status] *)
  | Unavailable  (** no room in the rate table: [503] *)
(** What the checks found: constant constructors (no allocation). *)

val check : t -> Ctx.t -> verdict
(** [check t c] runs the checks on the request of [c] and counts it
    against the rate, but answers nothing: for a caller that answers a
    refusal its own way (a configuration's [error_page]). The seconds to
    wait of a [Too_many] or [Unavailable] are kept in [t] until the next
    check ({!retry_after}). Does not allocate for a request that passes,
    nor for a refusal (a password hash not remembered aside, see
    {!Basic_auth}). *)

val retry_after : t -> int
(** [retry_after t] is the whole seconds ([>= 1]) a client refused
    [Too_many] or [Unavailable] by the latest {!check} (or {!decide}) of
    [t] should wait: its [Retry-After]. Meaningless after another
    verdict. *)

val refuse : t -> Ctx.t -> verdict -> unit
(** [refuse t c v] answers verdict [v] of the latest {!check} of [t] (call
    it right after, for the same request): a short [text/plain],
    [no-store] answer; [401] with [WWW-Authenticate] (the user file's
    realm, {!Basic_auth.challenge}; a generic one when [t] has no user
    file), [429] (the zone's status) and [503] with [Retry-After] ({!retry_after}), [403]
    bare. With an error renderer set ([Server.config.errors], {!Errors})
    it writes the answer, with those same fields. [Admit] answers
    nothing. Logs the refusal at debug level. Does not allocate at other
    levels, beyond what a renderer allocates. *)

val admit : t -> Ctx.t -> bool
(** [admit t c] is {!check}, then {!refuse} when refused: [true] when the
    request passes (nothing is answered: the caller answers it), else
    [false] and the refusal (403, 401, 429 or 503) is answered. What
    {!handler} does before it calls the application, for a caller that
    has already picked the guard (a location of a configuration file).
    Does not allocate for a request that passes. *)

val under : prefix:string -> t -> app:(Ctx.t -> unit) -> Ctx.t -> unit
(** [under ~prefix t ~app] checks only requests whose path is [prefix]
    or below it ([/admin] guards [/admin] and [/admin/x], not
    [/administrator]); others go to [app] unchecked. The path is compared
    as the static handler resolves it: percent-decoded, dot segments and
    empty segments resolved ({!Httpz.Target.decode_path}), so
    [/%61dmin/] and [//x/../admin/] are under [/admin] too; a target that
    does not decode is checked. Does not allocate. *)

val decide : t -> addr:Bytes.t -> now_ns:int -> Httpz.Bigstring.t -> Httpz.Span.t -> verdict
(** [decide t ~addr ~now_ns buf authorization] is {!check} for a client
    at [addr] (16 bytes) at monotonic [now_ns], with its [Authorization]
    value ({!Httpz.Span.empty} when absent): for tests. A zone keyed by a
    header or a cookie counts nothing here (there is no request). Allocates only a
    password hash not remembered. *)
