(** Open connections per client address, as nginx's [limit_conn]: the
    server holds at most [per_client] connections of one address (an IPv6
    client: of one /64, as {!Rate_limit}); one more is closed as soon as
    it is accepted, before a byte is read or a TLS handshake starts (an
    abusive client gets no answer it could use, and costs no parse; a
    [503] would need its request read first). A connection is counted,
    whatever it carries (an HTTP/2 connection's streams are not
    connections).

    {b Shared by the workers.} The counts live in a {!Limit_zone}, memory
    shared by the processes forked after it is made: {!share} (or
    {!prepare}) before the workers fork, and every worker's {!create}
    counts in that one table, so the limit holds for the whole server
    whichever worker the kernel hands a connection to (before, each
    worker counted alone: up to [workers * per_client]). Without a
    shared table (nothing prepared: a server run in one process), a
    table of its own.

    {b A worker that dies} (killed with its connections open) cannot
    uncount them: each process takes a row of the table ({!create}: an
    atomic compare-and-swap of the row's pid) and counts a client's
    connections in an entry tagged with its row; every process that
    takes a row ({!create}: a worker started, a crashed one's
    replacement) clears the entries of every row whose process is gone,
    whichever row it takes (after a reload, the replacement of a crashed
    worker takes a retired worker's row: the crashed one's counts are
    cleared all the same). At most 256 processes at once (a generation
    draining after a reload and the next): one more counts alone, and
    the first such is logged as an error (the limit then no longer holds
    across the workers).

    {b Bounded memory.} A client is looked up among 16 neighbours of its
    hash, placed by the table's secret ({!Client_key.hash}), so which
    addresses share a neighbourhood cannot be computed from outside. A
    client that finds its neighbourhood full of others is refused
    (closed), never let in uncounted: a crowd of addresses picked for one
    would otherwise hold any number of connections. The shared table has
    65536 entries by default (2 MiB, of which only the pages used are
    ever touched; nginx's [limit_conn_zone] SIZE sets it); a table of its
    own has [4 * slots] (a counted connection holds at most one entry,
    so it stays at most a quarter full). Creation allocates; {!acquire}
    and {!release} do not (the table's lock, {!Limit_zone.lock}, reads
    the monotonic clock: a vDSO call). *)

type t

val share : entries:int -> unit
(** [share ~entries] makes the table the workers forked after it count in
    ({!create}); kept as it is when one of the same size was made already
    (a reload: the previous generation's connections stay counted in it).
    Called before the workers fork. Allocates. *)

val prepare : unit -> unit
(** [prepare ()] is [share ~entries:65536] unless a table was made
    already: what the supervisor calls before it forks a generation. *)

val create : per_client:int -> slots:int -> t
(** [create ~per_client ~slots] for connection slots [0 .. slots - 1]:
    counting in the table {!share} made in this process or before the
    fork, else in one of its own (placed by a fresh
    {!Client_key.secret}).
    @raise Invalid_argument when [per_client < 1] or [slots < 1].
    @raise Httpz_sys.Entropy.Unavailable when the kernel gives no random
    bytes. *)

val create_keyed : secret:Client_key.secret -> per_client:int -> slots:int -> t
(** [create_keyed ~secret ...] is {!create} in a table of its own placed
    by [secret]: for tests that place clients on purpose. *)

type table
(** A table shared by the processes forked after it is made. *)

val table : ?secret:Client_key.secret -> entries:int -> unit -> table

val create_in : table -> per_client:int -> slots:int -> t
(** [create_in table ...] is {!create} counting in [table]: for tests. *)

val acquire : t -> slot:int -> Bytes.t -> bool
(** [acquire t ~slot addr]: the connection in [slot] comes from [addr]
    (16 bytes, {!Ctx.peer_ip}); [false] when that client has
    [per_client] connections already (in every process counting in the
    table), or no entry is free among its neighbours (nothing is
    counted: close it). Does not allocate. *)

val release : t -> slot:int -> unit
(** [release t ~slot]: the connection in [slot] closed; its client counts
    one connection less (nothing when it was not counted). Does not
    allocate. *)

val count : t -> Bytes.t -> int
(** [count t addr] is how many connections of [addr]'s client are
    counted, by every process (read under the table's lock; for tests
    and stats). *)
