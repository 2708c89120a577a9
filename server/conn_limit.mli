(** Open connections per client address, as nginx's [limit_conn]: a
    worker holds at most [per_client] connections of one address (an IPv6
    client: of one /64, as {!Rate_limit}); one more is closed as soon as
    it is accepted, before a byte is read or a TLS handshake starts (an
    abusive client gets no answer it could use, and costs no parse; a
    [503] would need its request read first).

    Per worker, like the connection limit: with [N] workers a client may
    hold up to [N * per_client] connections when the kernel spreads them.

    {b Bounded memory.} The table has [4 * slots] entries (rounded to a
    power of two) for a worker of [slots] connection slots: every counted
    connection holds one entry, so it never fills; a client is looked up
    among 16 neighbours of its hash, placed by a secret drawn when the
    table is made ({!Client_key.hash}), so which addresses share a
    neighbourhood cannot be computed from outside. A client that finds
    its neighbourhood full of others is refused (closed), never let in
    uncounted: a crowd of addresses picked for one would otherwise hold
    any number of connections. With the table at most a quarter full and
    the placement random, that takes 16 clients on 16 neighbouring
    entries: practically never by chance. Creation allocates;
    {!acquire} and {!release} do not. *)

type t

val create : per_client:int -> slots:int -> t
(** [create ~per_client ~slots] for connection slots [0 .. slots - 1],
    placed by a fresh {!Client_key.secret} (one per table: per worker).
    @raise Invalid_argument when [per_client < 1] or [slots < 1].
    @raise Httpz_sys.Entropy.Unavailable when the kernel gives no random
    bytes. *)

val create_keyed : secret:Client_key.secret -> per_client:int -> slots:int -> t
(** [create_keyed ~secret ...] is {!create} placed by [secret]: for tests
    that place clients on purpose. *)

val acquire : t -> slot:int -> Bytes.t -> bool
(** [acquire t ~slot addr]: the connection in [slot] comes from [addr]
    (16 bytes, {!Ctx.peer_ip}); [false] when that client has
    [per_client] connections already, or no entry is free among its
    neighbours (nothing is counted: close it).
    Does not allocate. *)

val release : t -> slot:int -> unit
(** [release t ~slot]: the connection in [slot] closed; its client counts
    one connection less (nothing when it was not counted). Does not
    allocate. *)

val count : t -> Bytes.t -> int
(** [count t addr] is how many connections of [addr]'s client are
    counted. *)
