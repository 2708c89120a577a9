(** Request rate per client address, with a burst: nginx's [limit_req]
    as the generic cell rate algorithm (GCRA, a token bucket kept as one
    number per client: the theoretical arrival time of its next request).
    A client may send [burst] requests at once, then one every
    [1 / rate] seconds; a request earlier than that is refused with the
    seconds to wait ([Retry-After]).

    {b Bounded memory.} The table has a fixed number of entries, chosen
    at creation; a client is looked up among [probe] (16) neighbours of
    its hash. A new client takes a free or expired entry (one whose
    client is back to a full burst, so forgetting it changes nothing);
    when every one of them holds a client still below its full burst,
    the new client is refused (as nginx answers [503] when its
    [limit_req] zone is exhausted) until the first of them expires. A
    zone keyed by address never takes a live entry: that would hand two
    clients a fresh burst each, and a crowd of addresses (costly to
    vary) could reset each other at will. So a client is limited as
    configured or more, never less; size the table above the clients
    limited at once.

    {b Client-chosen keys} ([evict]: a header's or a cookie's value).
    There a full neighbourhood gives up the entry closest to expiry to
    the new key (as nginx forces the expiry of its oldest nodes): a
    client that invents a new value gets a fresh burst anyway, so this
    costs nothing, while refusing would let one client fill the table
    with invented values and lock every other client out.

    {b Placement.} The hash is keyed by a secret drawn from the kernel
    when the table is made ({!Client_key.hash}): which addresses share a
    neighbourhood cannot be computed from outside, so a set of addresses
    picked to crowd one (and, before, to get past the limit) cannot be
    built offline.

    {b Keys.} An IPv4 client is its address; an IPv6 client is its /64
    (a host owns a /64 and picks addresses in it at will). A string key
    (a header's or a cookie's value, a site's name: {!admit_span}) is a
    64-bit fingerprint keyed by the zone's secret, and its length.

    {b Shared by the workers.} The table is a {!Limit_zone}: memory
    shared by every process forked after it is made, each request
    counted under the zone's lock. Made before the workers fork (as
    {!Guard.create} is), it limits a client once for the whole server,
    whichever worker its connections reach (before, each worker counted
    alone and a client with a new connection per request got up to
    [workers] times the rate). Several limits may count in one zone
    ({!of_zone}, nginx's [limit_req zone=NAME] in several locations),
    each with its own rate and burst against the client's one entry.

    Creation allocates; {!admit} does not. *)

type t

val create : rate:float -> burst:int -> entries:int -> t
(** [create ~rate ~burst ~entries]: [rate] requests per second ([> 0]),
    [burst] requests at once ([>= 1]), in a table of [entries] (rounded up
    to a power of two, at least 16; 32 bytes each, in a new
    {!Limit_zone}), placed by a fresh
    {!Client_key.secret}.
    @raise Invalid_argument on a bound out of range.
    @raise Httpz_sys.Entropy.Unavailable when the kernel gives no random
    bytes. *)

val of_zone : ?evict:bool -> Limit_zone.t -> rate:float -> burst:int -> t
(** [of_zone zone ~rate ~burst] counts in [zone] (shared with every other
    limit made of it). [evict] (default [false]): a full neighbourhood
    gives up its entry closest to expiry instead of refusing the new
    client (for keys the client chooses; give the same for every limit
    of a zone).
    @raise Invalid_argument on a bound out of range. *)

val zone : t -> Limit_zone.t

val create_keyed : secret:Client_key.secret -> rate:float -> burst:int -> entries:int -> t
(** [create_keyed ~secret ...] is {!create} placed by [secret]: for tests
    that place clients on purpose. *)

val admit : t -> Bytes.t -> now_ns:int -> int
(** [admit t addr ~now_ns] is [0] when the client with address [addr]
    (16 bytes, {!Ctx.peer_ip}) may send a request at monotonic time
    [now_ns], and counts it; [n > 0] when it is over its rate: the whole
    seconds until it may; [-n < 0] when the table has no room for it:
    the whole seconds ([n >= 1]) until an entry it may take expires
    (never with [evict]).
    Nothing is counted for a refusal. Does not allocate. *)

val admit_words : t -> int -> int -> int -> now_ns:int -> int
(** [admit_words t k0 k1 k2 ~now_ns] is {!admit} for the client keyed by
    those three words ({!Client_key.high}, {!Client_key.middle},
    {!Client_key.low} of an address, or any key made the same way for
    every request of one client). Does not allocate. *)

val admit_span : t -> Httpz.Bigstring.t -> off:int -> len:int -> now_ns:int -> int
(** [admit_span t buf ~off ~len ~now_ns] is {!admit} for the client keyed
    by those bytes (a header's value, a cookie's). Does not allocate. *)

val entries : t -> int
(** The table's size. *)

val tracked : t -> now_ns:int -> int
(** [tracked t ~now_ns] is the number of clients still below a full
    burst at [now_ns] (for tests and stats): each entry read under the
    zone's lock, taken for 4096 entries at a time (so the sum of a table
    in use is of a moment each chunk); it walks the whole table, so not
    for a request's path. *)
