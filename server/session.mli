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
       signed store, or [workers = 1]. Sessions die with the process.
       Expired entries are swept as new sessions are made.}}

    {b Commit.} {!set}, {!remove} and {!clear} change the loaded value;
    {!commit} then queues the [Set-Cookie] header
    ({!Respond.add_header}), written when the response starts through
    {!Respond} or {!Sse}. Without a change, {!commit} sends nothing (the
    cookie's expiry is not renewed by reading). A session with no key
    left gets its cookie deleted.

    {b Allocation.} Everything here allocates (strings, the map, the
    cookie); it runs on the worker's loop, synchronously. *)

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


type t
(** A session loaded for one request. *)

val load : store -> Ctx.t -> t
(** [load store c] is the session the request's cookie names: empty when
    there is no cookie, or it does not verify, or it expired. *)

val get : t -> string -> string option
val set : t -> string -> string -> unit
val remove : t -> string -> unit
val bindings : t -> (string * string) list

val clear : t -> unit
(** [clear s] empties the session (logout); {!commit} then deletes the
    cookie (and, in memory, the entry). *)

val regenerate : t -> unit
(** [regenerate s] gives the session a new id on {!commit} (memory store;
    the signed store re-signs): call it at login, so an id planted in the
    browser before cannot follow the user in (session fixation). *)

val is_new : t -> bool
(** [is_new s]: no valid cookie came with the request. *)

val commit : t -> Ctx.t -> unit
(** [commit s c] queues the [Set-Cookie] a change needs, for the response
    [c] starts next.
    @raise Invalid_argument when a signed cookie would exceed 4096
    bytes. *)

(** {1 The signed format} Exposed for tests. *)

val encode : store -> now:int -> (string * string) list -> string
(** [encode store ~now pairs] is the cookie value of a signed store:
    [base64url(payload) "." base64url(mac)], the payload being the expiry
    time and the form-encoded pairs. *)

val decode : store -> now:int -> string -> (string * string) list option
(** [decode store ~now v] is the pairs of a value {!encode} made with one
    of [store]'s keys, that has not expired at [now]; [None] otherwise
    (bad format, bad MAC, expired). MACs are compared in constant time. *)
