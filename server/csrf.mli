(** Cross-site request forgery protection for requests that change
    state: a per-session token that forms carry, and a check of where the
    request comes from.

    {[
      let csrf = Csrf.create store in
      (* GET /login *)
      let s = Session.load store c in
      let form = "<form method=post>" ^ Csrf.field csrf s ^ "...</form>" in
      Session.commit s c; Respond.html c form
      (* POST /login, registered with Route.post_form: checked before the
         handler runs; a failure is 403 with the reason *)
    ]}

    {b The check} ({!check}), for unsafe methods (POST, PUT, PATCH,
    DELETE and unregistered ones; GET, HEAD, OPTIONS, TRACE always pass):
    {ol
    {- [Sec-Fetch-Site], when present (every current browser sends it),
       must be [same-origin], [same-site] or [none] (typed by the user);
       [cross-site] is refused.}
    {- [Origin], when present, must be this server's origin: [https://]
       on a TLS connection, [http://] otherwise, followed by the [Host]
       field (compared ignoring case). ["null"] (sandboxed pages, some
       redirects) is refused. Without [Origin], [Referer] is checked the
       same way (its origin part). With neither — clients that are not
       browsers — the token decides alone.}
    {- The token, from the body's form field {!field_name} or the
       [X-CSRF-Token] header (for scripts), must equal the session's,
       compared in constant time.}}
    Behind a proxy that rewrites [Host], the origin check needs the
    public host: pass it as [host] to {!check_origin_values}.

    Tokens are not masked per response: do not compress responses that
    hold one together with attacker-chosen text (BREACH).

    {b Allocation.} {!check} allocates (it loads the session and decodes
    the body); the failures are constant constructors. *)

type t

val create : ?field:string -> Session.store -> t
(** [create store] protects with tokens kept in [store]'s sessions under
    the key ["_csrf"]. [field] is the form field name (default
    ["_csrf"]). *)

val field_name : t -> string

val token : t -> Session.t -> string
(** [token t s] is the session's token, made (24 random bytes) and stored
    in [s] on first use: {!Session.commit} the session in that response.
    {!Session.regenerate} (at login) drops it, so the next call makes a
    new one: a token seen before login does not pass after it. *)

val field : t -> Session.t -> string
(** [field t s] is [<input type="hidden" name="_csrf" value="TOKEN">]
    (the token is URL-safe base64: nothing to escape). *)

type failure =
  | Cross_site  (** [Sec-Fetch-Site: cross-site] *)
  | Foreign_origin  (** [Origin] or [Referer] of another origin, or ["null"] *)
  | Missing_token  (** no token in the form or header, or none in the session *)
  | Bad_token  (** a token that is not the session's *)

val failure_to_string : failure -> string
(** A short reason for the 403 body and logs ("cross-site request", ...). *)

val unsafe : Httpz.Meth.t -> bool
(** [unsafe m]: the method is checked (not GET, HEAD, OPTIONS, TRACE). *)

val check_origin : Ctx.t -> (unit, failure) result
(** [check_origin c] is steps 1 and 2 of the check, for any unsafe
    request (a JSON API route, say); [Ok ()] for safe methods. *)

val check_origin_values :
  secure:bool -> host:string -> origin:string option -> referer:string option -> fetch_site:string option ->
  (unit, failure) result
(** The same on given values. *)

val check : t -> Ctx.t -> (unit, failure) result
(** [check t c] is the whole check; the body must be in memory
    ({!Ctx.body_ready}) for the form field to be found. It loads the
    session synchronously ({!Session.load}), so it needs a signed or
    memory store; with a store read off the loop ({!Session.offloaded},
    the SQL stores) use {!check_then}, or {!check_session} inside
    {!Session.with_session} ([Route.compile ~csrf] takes either kind).
    @raise Invalid_argument with an offloaded store. *)

val check_then : t -> Ctx.t -> ((unit, failure) result -> Ctx.t -> unit) -> unit
(** [check_then t c k] is [k (check t c) c] for a signed or memory
    store; with an {!Session.offloaded} one, the session is read off the
    loop first ({!Session.with_session}) and [k] runs after that wait
    ([Route]'s form routes use it). The origin checks and a safe method
    decide at once. *)

val reads_off_loop : t -> bool
(** The store is an {!Session.offloaded} one. *)

val check_session : t -> Ctx.t -> Session.t -> (unit, failure) result
(** [check_session t c s] is {!check} against the session [s] the
    handler loaded itself. *)
