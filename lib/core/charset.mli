(** Byte classes of the HTTP grammar as 256-entry lookup tables.

    Each predicate is one [String.unsafe_get] and a compare: the parser's
    inner loops use them instead of chains of range tests. *)

val is_ows : char -> bool
(** [OWS] bytes: space and horizontal tab (RFC 9110 §5.6.3). *)

val is_tchar : char -> bool
(** [tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." /
    "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA] (RFC 9110 §5.6.2). *)

val is_host_char : char -> bool
(** Bytes of [uri-host [":" port]] (RFC 3986 §3.2.2): unreserved,
    sub-delims, ["%"] of pct-encoded, [":"], and the brackets of an
    IP-literal. *)

val is_field_vchar : char -> bool
(** [field-vchar = VCHAR / obs-text] (RFC 9110 §5.5), i.e. 0x21-0x7E and
    0x80-0xFF. *)
