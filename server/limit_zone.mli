(** A table of fixed-size entries in memory shared by the processes
    forked after it is made ({!Httpz_sys.Mapped.map_shared}): the store
    of the per-client limits ({!Rate_limit}, {!Conn_limit}) that every
    worker of a server counts in, so a client that reaches several
    workers (a new connection each time) is limited once, not once per
    worker, as nginx's [limit_req_zone] and [limit_conn_zone].

    {b Layout.} A 64-byte header (word 0: the lock), then [entries]
    entries of 4 words (32 bytes): three key words and a value; an entry
    whose value is [0] is free. What the value means is the user's
    (a theoretical arrival time, a count).

    {b Atomicity.} One spinlock per table, taken by an atomic
    compare-and-swap ({!Httpz_sys.Mapped.cas64}: no syscall, no
    allocation) around a probe of at most 16 entries: a few hundred
    nanoseconds held, so two workers rarely meet on it. The lock word
    holds the monotonic time it was taken at: a process that finds it
    held for more than a second (its holder killed in between, or
    stopped) takes it over, so a worker that dies holding it does not
    stop the others. A waiter does not rely on the time it was given
    alone (read before it waited: one that came just after a dead
    holder's stamp would never see it age): it also times the stamp it
    sees on the monotonic clock, read again while it waits (every 64
    tries), and takes over one unchanged for a second. Past 1024 tries
    it sleeps 20 us between tries (its holder is off its CPU). Reads and
    writes of the entries happen only under the lock.

    {b Placement.} Each table has its own secret ({!Client_key.secret}),
    drawn when it is made; a table carried over a reload keeps it.

    {b Lifetime.} A mapping is never unmapped (the processes forked
    from it may still use it): {!reuse} lets a reload keep the tables
    of zones that did not change instead of making new ones, and
    {!discard} gives back those a failed reading made. Creation
    allocates; {!get}, {!set}, {!lock} and {!unlock} do not. *)

type t

val create : ?secret:Client_key.secret -> entries:int -> unit -> t
(** [create ~entries ()]: a zeroed shared table of [entries] (rounded up
    to a power of two, at least 16, at most 2{^24}) entries.
    @raise Invalid_argument for [entries] out of range.
    @raise Httpz_sys.Entropy.Unavailable when no secret is given and the
    kernel gives no random bytes. *)

val entries_of_size : int -> int
(** [entries_of_size bytes]: how many entries a zone of [bytes] holds
    ([bytes / 32] rounded down to a power of two, at least 16, at most
    2{^24}; the 64-byte header comes on top). *)

val rounded : int -> int
(** [rounded n]: the entries {!create} makes for [n]. *)

val entries : t -> int
val mask : t -> int
(** [entries t - 1]: an index is [hash land mask t]. *)

val secret : t -> Client_key.secret

val get : t -> int -> int -> int
(** [get t e w] is word [w] (0-2: the key; 3: the value) of entry [e].
    Unchecked: [e] from a hash masked by {!mask}, [0 <= w <= 3]. *)

val set : t -> int -> int -> int -> unit
(** [set t e w v]. *)

val lock : t -> now_ns:int -> int
(** [lock t ~now_ns] waits for the table's lock and takes it; the result
    is the stamp to give {!unlock}. [now_ns] is the time of the call (the
    stamp); a lock whose stamp is more than a second before [now_ns], or
    that the waiter saw held by one stamp for a second of its own
    monotonic clock, is taken over. *)

val unlock : t -> int -> unit
(** [unlock t stamp] releases the lock taken with [stamp] (nothing when
    another process took it over). *)

(** {1 Zones across reloads} *)

type registry
(** Tables by zone identity (a name, its key and its size), as made by
    one reading of a configuration. *)

val registry : unit -> registry

val reuse : previous:registry -> next:registry -> id:string -> entries:int -> t
(** [reuse ~previous ~next ~id ~entries]: the table of [id] in [next]
    when this reading made it already; else [previous]'s when it has the
    same [entries] (its counts and secret carried over, as nginx keeps a
    zone whose size did not change); else a new one. Recorded in [next].
    Allocates. *)

val discard : previous:registry -> next:registry -> unit
(** [discard ~previous ~next]: the reading that made [next] failed, and
    no process was forked with its tables: those of [next] not carried
    over from [previous] are unmapped (their limits must not be used
    again), and [next] is emptied. *)
