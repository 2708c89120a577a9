(** Does the client accept the gzip coding? (RFC 9110 §12.5.3)

    Every [Accept-Encoding] field of the request counts. [gzip] (and
    [x-gzip], the same coding) with a q-value above 0 accepts it, and so
    does [*] above 0 when gzip is not listed; [q=0] refuses. An element that
    does not parse (a bad q-value, stray bytes) is skipped whole; a coding
    listed twice takes its highest q. *)

val accepts_gzip : Httpz.Bigstring.t -> Httpz.Request.t -> bool
(** [accepts_gzip buf req], the field values being in [buf]. Does not
    allocate. *)

val accepts_gzip_value : string -> bool
(** {!accepts_gzip} for a request with one field of value [v]. Allocates:
    for tests. *)
