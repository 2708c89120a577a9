(** Sessions: a small string map per browser, kept across requests by a
    cookie ([HttpOnly], [SameSite=Lax], [Path=/], [Secure] on TLS
    connections).

    {[
      let store = Session.signed ~keys:[ secret ] () in
      (* in a handler *)
      let s = Session.load store c in
      Session.set s "user" "alice";
      Session.commit s c;                 (* queues Set-Cookie *)
      Respond.redirect c "/me"            (* ... written here *)
    ]}

    {b Two stores.}
    {ul
    {- {!signed}: the map itself is the cookie, signed with HMAC-SHA256
       (so the client can read it but not change it: put no secret in a
       session) and carrying its expiry time. No server state, so it
       works with any number of workers and across restarts. Keys rotate:
       new cookies are signed with the first key, and a cookie signed with
       any key of the list is accepted; drop a key from the list to
       invalidate its cookies. The cookie must stay under 4096 bytes.}
    {- {!memory}: the cookie is a random id (32 bytes from the kernel) and
       the map stays in a table {e of this worker process}. With several
       workers each has its own table, and a client's next request may
       reach another worker that does not know its session: use the
       signed store, an SQL store ({!offloaded}), or [workers = 1]. Sessions die with the process.
       Expired entries are swept as new sessions are made.}
    {- {!offloaded}: the cookie is a random id, the map is kept by a
       {!backend} that every worker and machine shares: a database,
       read and written on the worker's offload pool ({!Ctx.offload}) so
       the loop never blocks. [httpz.session_sqlite]
       ([Httpz_session_sqlite.Session_sqlite]: one file, every worker of
       one machine, survives restarts) and [httpz.session_postgresql]
       (several machines) are two. Such a store is loaded with
       {!with_session} and written with {!save}, which take a
       continuation; {!load} and {!commit} refuse it.}}

    {[
      (* any store; a handler stays one expression *)
      Session.with_session store c (fun s c ->
          Session.regenerate s;
          Session.set s "user" "alice";
          Session.save s c (fun c -> Respond.redirect c "/me"))
    ]}

    {b Commit.} {!set}, {!remove} and {!clear} change the loaded value;
    {!commit} then queues the [Set-Cookie] header
    ({!Respond.add_header}), written when the response starts through
    {!Respond} or {!Sse}. Without a change, {!commit} sends nothing (the
    cookie's expiry is not renewed by reading). A session with no key
    left gets its cookie deleted.

    {b Allocation.} Everything here allocates (strings, the map, the
    cookie); it runs on the worker's loop, synchronously, except an
    offloaded store's {!backend} calls, which run on an offload thread. *)

type store

val signed : ?cookie:string -> ?max_age:int -> keys:string list -> unit -> store
(** [signed ~keys ()] is the signed-cookie store. [cookie] is the cookie
    name (default ["httpz_session"]), [max_age] the lifetime in seconds
    (default 7 days), written in the payload and as [Max-Age].
    @raise Invalid_argument when [keys] is empty or a key is shorter than
    32 bytes (make one with [Httpz_sys.Entropy.bytes 32], keep it out of
    the source tree). *)

val memory : ?cookie:string -> ?max_age:int -> ?max_sessions:int -> unit -> store
(** [memory ()] is an in-memory store for this worker (see above), holding
    at most [max_sessions] sessions (default 100,000): when a new one would
    pass the bound, the oldest goes, so clients that
    make sessions without end cannot grow the table. *)

type backend = {
  find : string -> now:int -> (string * string) list option;
      (** [find id ~now]: the pairs stored under [id] if it has not
          expired at [now] (Unix seconds) *)
  save : string -> (string * string) list -> expires:int -> fresh:bool -> unit;
      (** [save id pairs ~expires ~fresh]: insert a new session ([fresh]:
          an id made by this request), else update the one stored under
          [id] and only if it is still there: a request that loaded a
          session before it was deleted (a logout elsewhere, a
          revocation) must not bring it back *)
  delete : string -> unit;
}
(** Where an {!offloaded} store keeps its sessions. The three functions
    run on an offload thread (several at once, on as many threads), never
    on the loop: they may block, and must not touch the server's state.
    An exception makes the request's answer a 500. Ids are
    {!Token.generate}[ 32] (43 URL-safe characters); {!serialize} makes
    the pairs one string to store. *)

val offloaded : ?cookie:string -> ?max_age:int -> backend -> store
(** [offloaded backend] is a store kept by [backend] (see above); the
    cookie and [max_age] as for {!memory}. A cookie that is no id the
    server could have made is not looked up. *)

val serialize : (string * string) list -> string
(** [serialize pairs] is [k=v&k2=v2], each part form-encoded. *)

val deserialize : string -> (string * string) list
(** The inverse of {!serialize}: [deserialize (serialize p) = p]. *)

type t
(** A session loaded for one request. *)

val load : store -> Ctx.t -> t
(** [load store c] is the session the request's cookie names: empty when
    there is no cookie, or it does not verify, or it expired.
    @raise Invalid_argument with an {!offloaded} store (use
    {!with_session}). *)

val reads_off_loop : store -> bool
(** [reads_off_loop store]: [store] is an {!offloaded} one, whose
    sessions only {!with_session} reads. *)

val with_session : store -> Ctx.t -> (t -> Ctx.t -> unit) -> unit
(** [with_session store c k] is [k (load store c) c] for the signed and
    memory stores; with an {!offloaded} store the lookup runs on the
    offload pool first, then [k] on the loop (the handler returns
    meanwhile, as with {!Ctx.offload}: a full queue answers 503 and [k]
    never runs). No cookie: [k] at once, nothing looked up. *)

val get : t -> string -> string option
val set : t -> string -> string -> unit
val remove : t -> string -> unit
val bindings : t -> (string * string) list

val clear : t -> unit
(** [clear s] empties the session (logout); {!commit} then deletes the
    cookie (and, in memory, the entry). *)

val regenerate : t -> unit
(** [regenerate s] gives the session a new id on {!commit} (memory and
    offloaded stores; the signed store re-signs) and drops its CSRF token
    (key {!csrf_key}: {!Csrf.token} makes a new one): call it at login, so
    an id or a token planted in or read from the browser before cannot
    follow the user in (session fixation). *)

val csrf_key : string
(** ["_csrf"], the key {!Csrf} keeps its token under. *)

val is_new : t -> bool
(** [is_new s]: no valid cookie came with the request. *)

val commit : t -> Ctx.t -> unit
(** [commit s c] queues the [Set-Cookie] a change needs, for the response
    [c] starts next.
    @raise Invalid_argument when a signed cookie would exceed 4096
    bytes, or for a changed session of an {!offloaded} store (use
    {!save}). *)

val save : t -> Ctx.t -> (Ctx.t -> unit) -> unit
(** [save s c k] is {!commit} then [k c] for the signed and memory
    stores; with an {!offloaded} store the change is written on the
    offload pool first (the old id deleted after {!regenerate} or
    {!clear}), then the [Set-Cookie] queued and [k c] run on the loop,
    so the client's next request sees what this one stored. Without a
    change, [k c] at once. *)

(** {1 The signed format} Exposed for tests. *)

val encode : store -> now:int -> (string * string) list -> string
(** [encode store ~now pairs] is the cookie value of a signed store:
    [base64url(payload) "." base64url(mac)], the payload being the expiry
    time and the form-encoded pairs. *)

val decode : store -> now:int -> string -> (string * string) list option
(** [decode store ~now v] is the pairs of a value {!encode} made with one
    of [store]'s keys, that has not expired at [now]; [None] otherwise
    (bad format, bad MAC, expired). MACs are compared in constant time. *)
