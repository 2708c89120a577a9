(** Database connections for handlers: one per offload thread.

    A handler must not block its worker's loop, so database work goes to
    the offload pool ({!Ctx.offload}); a connection is not meant to be
    used by two threads at once, and opening one per request is slow.
    The pattern: a pool made once, at start-up (before the workers fork:
    nothing is opened yet), that gives each offload thread its own
    connection, opened on the thread's first use and kept for the next
    ones.

    {[
      let db = Db_pool.create ~close:Sqlite3.db_close (fun () -> Sqlite3.db_open "app.db")
      (* in a handler *)
      Db_pool.offload db c (fun conn -> count_users conn) (fun n c ->
          Respond.text c (string_of_int n))
      (* Server.run ~on_worker_stop:(fun () -> Db_pool.close_all db) *)
    ]}

    A worker has [Server.config.offload_threads] threads, so at most that
    many connections per worker ([workers * offload_threads] for the
    server): size the database's connection limit for it.

    {b Invariants.} A connection is used by the thread that opened it
    alone, one call at a time. Connections are keyed by process and
    thread: one opened before a fork (by the supervisor, in an [on_start]
    hook) is never used by a worker. If [f] raises, that connection is
    closed and forgotten (the next use opens a new one: a connection the
    server dropped is not kept), and the exception passes on. The table
    is guarded by a mutex; it is not on the loop's per-request path
    (everything here allocates). *)

type 'a t

val create : ?close:('a -> unit) -> (unit -> 'a) -> 'a t
(** [create ~close connect] is a pool that opens connections with
    [connect ()] (on the thread that will use them) and closes them with
    [close] (default: nothing). Opens nothing now. *)

val use : 'a t -> ('a -> 'b) -> 'b
(** [use t f] is [f conn] with this thread's connection, opened first if
    it has none. Call it from offload work (or from a hook), never on the
    loop: [connect] and [f] may block.
    @raise Failure after {!close_all}. *)

val offload : 'a t -> Ctx.t -> ('a -> 'b) -> ('b -> Ctx.t -> unit) -> unit
(** [offload t c f k] is [Ctx.offload c (fun () -> use t f) k]. *)

val close_all : 'a t -> unit
(** [close_all t] closes this process's connections (those in use: as
    their call returns) and refuses new ones; for an [on_worker_stop]
    hook. Exceptions from [close] are ignored. *)

val opened : 'a t -> int
(** Connections this process holds now (for tests and logs). *)
