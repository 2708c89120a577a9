(** Sessions in an SQLite file: {!Httpz_server.Session.offloaded} over
    one table, shared by every worker of the machine and kept across
    restarts (the embedded choice; [Httpz_session_postgresql.Session_postgresql] for
    several machines).

    {[
      let db = Session_sqlite.create "/var/lib/app/sessions.db" in
      let store = Session_sqlite.store db in
      Server.run ~on_worker_stop:(fun () -> Session_sqlite.close db) config
        (fun c -> Session.with_session store c (fun s c -> ...))
    ]}

    {b Schema.} [CREATE TABLE <table> (id TEXT PRIMARY KEY, data TEXT NOT
    NULL, expires INTEGER NOT NULL)], [data] being
    {!Httpz_server.Session.serialize}'s, [expires] Unix seconds; an index
    on [expires] for the sweep.

    {b Concurrency.} The file is in WAL mode (readers never wait for the
    writer) with [synchronous = NORMAL] (a power cut may lose the last
    commits, never the file); each offload thread of each worker has its
    own connection ({!Httpz_server.Db_pool}), and a writer waits up to
    [busy_timeout_ms] for another's lock (the wait is on the offload
    thread: the loop goes on). {b Expiry}: a read ignores expired rows;
    every 256th write of a process deletes them ({!sweep}). *)

type t

val create : ?table:string -> ?busy_timeout_ms:int -> string -> t
(** [create path] opens (creating it if needed) the database [path],
    switches it to WAL and creates the table (default
    ["httpz_sessions"]) if missing, then closes that connection: call it
    at start-up, before the workers fork. [busy_timeout_ms] defaults to
    5000. Under [Server.config.user] the workers write as that user: the
    file (and its directory, where SQLite puts the [-wal] and [-shm]
    files) must be writable by them, so give them to that user, or call
    [create] from [~on_worker_start] instead (after the drop of
    privileges; creating the table twice is harmless).
    @raise Failure when the file cannot be opened or set up, or the table
    name is not [[a-z_][a-z0-9_]*]. *)

val backend : t -> Httpz_server.Session.backend
(** The table as a {!Httpz_server.Session.backend} ({!store} is
    [Session.offloaded] of it): for tests and stores of one's own. *)

val store : ?cookie:string -> ?max_age:int -> t -> Httpz_server.Session.store
(** The session store on [t] (cookie and [max_age] as
    {!Httpz_server.Session.memory}'s). *)

val pool : t -> Sqlite3.db Httpz_server.Db_pool.t
(** The connections the store uses, one per offload thread, for the
    application's own queries on the same file. *)

val sweep : t -> now:int -> int
(** [sweep t ~now] deletes the sessions expired at [now] and is their
    number; blocking: call it from offload work or a hook. *)

val close : t -> unit
(** [close t] closes this process's connections ({!Httpz_server.Db_pool.close_all}):
    an [on_worker_stop] hook. *)
