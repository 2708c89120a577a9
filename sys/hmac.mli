(** HMAC-SHA256 (RFC 2104, FIPS 180-4) through OpenSSL, for signed
    cookies, and the comparison that goes with it. *)

external sha256_into : string -> string -> Bytes.t -> int = "httpz_hmac_sha256" [@@noalloc]
(** [sha256_into key msg out] writes HMAC-SHA256 of [msg] under [key] into
    [out.(0 .. 31)] and is [32], or [-1] when OpenSSL fails. [out] must
    hold at least 32 bytes (not checked: use {!sha256}). *)

val sha256 : key:string -> string -> string
(** [sha256 ~key msg] is the 32-byte MAC. Allocates.
    @raise Failure if OpenSSL fails (it does not for valid arguments). *)

val equal : string -> string -> bool
(** [equal a b] compares in time that depends only on the lengths, never
    on where the first difference is: for MACs and tokens, so a client
    cannot find a valid one byte by byte from response times. *)
