(** A client's address as the per-client limits key it ({!Rate_limit},
    {!Conn_limit}) and the address rules read it ({!Address_rules}): the
    16 bytes of {!Ctx.peer_ip} as four 32-bit words, and a three-word key
    that is the whole address of an IPv4 client and the /64 of an IPv6
    one (a host owns a /64 and picks addresses in it at will). Nothing
    here allocates. *)

val word : Bytes.t -> int -> int
(** [word addr i] is the [i]th 32-bit word (0-3) of the 16 bytes, in
    machine byte order (compare only with words read the same way). *)

val high : Bytes.t -> int
(** The key's first word: word 0. *)

val middle : Bytes.t -> int
(** The key's second word: word 1. *)

val low : Bytes.t -> int
(** The key's third word: an IPv4 client's address (words 0-2 are
    [::ffff:]), tagged so that it never equals [0]; [0] for IPv6. *)

type secret
(** The key of {!hash}: 64 bits. *)

val secret : unit -> secret
(** [secret ()] is 64 bits from the kernel ({!Httpz_sys.Entropy}): made
    once per table, when it is created (never per request).
    @raise Httpz_sys.Entropy.Unavailable when the kernel gives none. *)

val secret_of_ints : int -> int -> secret
(** [secret_of_ints a b]: a given secret (their low 32 bits each), for
    tests that must place keys on purpose. *)

val hash : secret -> int -> int -> int -> int
(** [hash secret high middle low] is HalfSipHash-2-4 keyed by [secret]
    of a key's words: a non-negative 32-bit int (mask it to a table's
    size). Without the secret, which keys land together cannot be
    computed: a table indexed by it cannot be crowded on purpose by
    addresses picked offline (an unkeyed mix could, and a crowded
    neighbourhood was a way past the limits). Does not allocate. *)

val hash_span : secret -> Httpz.Bigstring.t -> off:int -> len:int -> int
(** [hash_span secret buf ~off ~len] is HalfSipHash-2-4 keyed by
    [secret] of those bytes (a header's or a cookie's value keying a
    limit): a non-negative 32-bit int. Does not allocate. *)

val derived : secret -> secret
(** [derived s]: another secret made from [s], for a second, independent
    32 bits of a key's fingerprint ({!Rate_limit.admit_span}). *)
