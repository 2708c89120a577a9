(** Authority grammar for the request head (RFC 3986 §3.2.2-3.2.3): the
    Host field's value and CONNECT's authority-form target. Checks only:
    no allocation, no state, answers as booleans for {!Request} to turn
    into its errors. *)

val valid_host : simd:bool -> Bigstring.t -> off:int -> len:int -> bool
(** [valid_host ~simd b ~off ~len]: the bytes are Host = uri-host
    [ ":" port ] (RFC 9110 §7.2): an IP-literal in brackets, or a reg-name /
    IPv4address of unreserved, sub-delims and pct-encoded bytes, then
    optionally ':' and digits. Empty is valid (the grammar allows an empty
    reg-name). [simd] scans the common letters, digits, '-' and '.' with
    {!Simd.hostname_end} instead of {!Swar.skip_hostname}: same answer. *)

val valid_connect_target : Bigstring.t -> off:int -> len:int -> bool
(** [valid_connect_target b ~off ~len]: the bytes are CONNECT's
    authority-form, uri-host ":" port (RFC 9112 §3.2.3): host characters
    only (no path, scheme or userinfo), and digits after the last colon,
    which is not the first byte (an IPv6 literal's colons sit inside its
    brackets). *)
