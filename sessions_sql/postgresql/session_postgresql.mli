(** Sessions in PostgreSQL: {!Httpz_server.Session.offloaded} over one
    table, shared by every worker of every server that uses the same
    database (several machines behind a load balancer; one machine is
    served as well by [Httpz_session_sqlite.Session_sqlite]).

    {[
      let db = Session_postgresql.create ~conninfo:"host=db.internal dbname=app user=web" () in
      let store = Session_postgresql.store db in
      Server.run ~on_worker_stop:(fun () -> Session_postgresql.close db) config
        (fun c -> Session.with_session store c (fun s c -> ...))
    ]}

    [conninfo] is libpq's connection string (keywords or a
    [postgresql://] URI; a password belongs in [~/.pgpass] or
    [PGPASSWORD], not in the source); take it from the application's
    configuration.

    {b Schema.} [CREATE TABLE <table> (id TEXT PRIMARY KEY, data TEXT NOT
    NULL, expires BIGINT NOT NULL)] and an index on [expires], as in the
    SQLite store. {b Connections}: one per offload thread of each worker
    ({!Httpz_server.Db_pool}), opened on first use: a server holds up to
    [workers * offload_threads] of them. A query that fails (the server
    restarted, the network) closes its connection; the next one
    reconnects. {b Expiry}: reads ignore expired rows; every 256th write
    of a process deletes them ({!sweep}). *)

type t

val create : ?table:string -> conninfo:string -> unit -> t
(** [create ~conninfo ()] connects once, creates the table (default
    ["httpz_sessions"]) if missing and disconnects: call it at start-up.
    @raise Failure when the database cannot be reached or set up, or the
    table name is not [[a-z_][a-z0-9_]*]. *)

val backend : t -> Httpz_server.Session.backend
(** The table as a {!Httpz_server.Session.backend} ({!store} is
    [Session.offloaded] of it): for tests and stores of one's own. *)

val store : ?cookie:string -> ?max_age:int -> t -> Httpz_server.Session.store

val pool : t -> Postgresql.connection Httpz_server.Db_pool.t
(** The store's connections, for the application's own queries. *)

val sweep : t -> now:int -> int
(** [sweep t ~now] deletes the sessions expired at [now], and is their
    number; blocking (offload work or a hook). *)

val close : t -> unit
(** This process's connections closed: an [on_worker_stop] hook. *)
