(** Request rate per client address, with a burst: nginx's [limit_req]
    as the generic cell rate algorithm (GCRA, a token bucket kept as one
    number per client: the theoretical arrival time of its next request).
    A client may send [burst] requests at once, then one every
    [1 / rate] seconds; a request earlier than that is refused with the
    seconds to wait ([Retry-After]).

    {b Bounded memory.} The table has a fixed number of entries, chosen
    at creation; a client is looked up among [probe] (8) neighbours of its
    hash. A new client takes a free or expired entry (one whose client is
    back to a full burst, so forgetting it changes nothing) and, when all
    of them are busy, the entry of the least restricted of them, which
    then starts over with a full burst. Ten thousand addresses cost what
    the table costs; with far more active clients than entries, some are
    limited less than configured, never more.

    {b Keys.} An IPv4 client is its address; an IPv6 client is its /64
    (a host owns a /64 and picks addresses in it at will).

    {b Per worker.} Each worker has its own table, state of its own
    connections; a keep-alive client stays on one worker, so it sees the
    configured rate; a client that opens a new connection per request
    may reach every worker and get up to [workers] times the rate.

    Not thread-safe: one per worker loop. Creation allocates; {!admit}
    does not. *)

type t

val create : rate:float -> burst:int -> entries:int -> t
(** [create ~rate ~burst ~entries]: [rate] requests per second ([> 0]),
    [burst] requests at once ([>= 1]), in a table of [entries] (rounded up
    to a power of two, at least 16; 40 bytes each).
    @raise Invalid_argument on a bound out of range. *)

val admit : t -> Bytes.t -> now_ns:int -> int
(** [admit t addr ~now_ns] is [0] when the client with address [addr]
    (16 bytes, {!Ctx.peer_ip}) may send a request at monotonic time
    [now_ns], and counts it; otherwise the whole seconds ([>= 1]) until
    it may, and nothing is counted. Does not allocate. *)

val entries : t -> int
(** The table's size. *)

val tracked : t -> now_ns:int -> int
(** [tracked t ~now_ns] is the number of clients still below a full
    burst at [now_ns] (for tests and stats). *)
