(** HTTP-date: reading and writing timestamps (RFC 9110 §5.6.7).

    {v
  HTTP-date    = IMF-fixdate / obs-date
  IMF-fixdate  = day-name "," SP date1 SP time-of-day SP GMT
                 ; Sun, 06 Nov 1994 08:49:37 GMT
  obs-date     = rfc850-date / asctime-date
  rfc850-date  = day-name-l "," SP date2 SP time-of-day SP GMT
                 ; Sunday, 06-Nov-94 08:49:37 GMT
  asctime-date = day-name SP date3 SP time-of-day SP year
                 ; Sun Nov  6 08:49:37 1994
  date1 = day SP month SP year        date2 = day "-" month "-" 2DIGIT
  date3 = month SP ( 2DIGIT / ( SP DIGIT ) )
  time-of-day = hour ":" minute ":" second   ; 00:00:00 - 23:59:60
    v}

    Times are Unix seconds (seconds since 1970-01-01T00:00:00Z, leap
    seconds not counted) in an immediate [int]. Calendar arithmetic is
    done here on integers (proleptic Gregorian calendar), not with
    [Unix.gmtime], which allocates a record and would pull [unix] into the
    protocol core.

    {b Allocation.} {!parse}, {!parse_span}, {!write_imf_fixdate} and
    {!Cache.write} allocate nothing. {!parse_string} and {!Cache.create}
    allocate. *)

(** {1 Reading} *)

val parse : Bigstring.t -> off:int -> len:int -> now:int -> int
(** [parse buf ~off ~len ~now] is the Unix time named by the [len] bytes
    at [off], which must be exactly one HTTP-date in any of the three
    formats (no surrounding whitespace: the request parser has already
    stripped the optional whitespace around field values), or [-1] when
    they are not.

    Rules, all from RFC 9110 §5.6.7:
    - HTTP-date is case-sensitive: ["sun"], ["NOV"], ["gmt"] are refused.
    - Day and month names must be the English ones; the day must exist in
      that month and year (Feb 29 only in leap years), hours are 00-23,
      minutes 00-59, seconds 00-60. A leap second [:60] is read as the
      first second of the next minute, since Unix time has no leap seconds.
    - The day name is checked for spelling but not against the date:
      RFC 9110 encourages recipients to be robust, and a mismatched
      weekday changes nothing about the instant named.
    - An rfc850-date's two-digit year [yy] becomes the year ending in [yy]
      that lies in the 100-year window [(Y - 50, Y + 50\]], where [Y] is
      the year of [now] (Unix seconds, UTC): a year "more than 50 years in
      the future" is taken as the most recent past year with those digits.
      httpz has no clock of its own; the server passes the time it already
      keeps for its [Date] header.

    {e Invariant:} the result is [-1] or in [\[0, 253402300799\]]. Dates
    before 1970 are answered [-1] (they are valid HTTP-dates but not
    representable beside the [-1] convention); for the fields a server
    reads (If-Modified-Since, If-Unmodified-Since, If-Range) RFC 9110 says
    to ignore an unparsable date, which is also a safe reading of one
    older than any file. Never reads outside [\[off, off + len)].
    @raise Invalid_argument when [\[off, off + len)] is not inside [buf]. *)

val parse_span : Bigstring.t -> Span.t -> now:int -> int
(** [parse_span buf s ~now] is [parse buf ~off:(Span.off s) ~len:(Span.len s) ~now]. *)

val parse_string : string -> now:int -> int
(** [parse_string s ~now] is {!parse} on the bytes of [s]. Allocates a
    temporary buffer: for tests and configuration, not for requests. *)

(** {1 Writing} *)

val imf_fixdate_length : int
(** [imf_fixdate_length] is [29], the length of every IMF-fixdate. *)

val min_time : int
(** [min_time] is [-62167219200], 0000-01-01T00:00:00Z: the earliest time
    with a four-digit year. *)

val max_time : int
(** [max_time] is [253402300799], 9999-12-31T23:59:59Z: the latest time
    with a four-digit year. *)

val write_imf_fixdate : Bigstring.t -> off:int -> int -> int
(** [write_imf_fixdate buf ~off t] writes the 29-byte IMF-fixdate for Unix
    time [t] (e.g. ["Sun, 06 Nov 1994 08:49:37 GMT"]) at [off] and is
    [off + 29]. Dates before 1970 are written too (a file's mtime can be
    negative). Does not allocate.
    @raise Invalid_argument when [t] is outside [\[min_time, max_time\]] or
    [\[off, off + 29)] is not inside [buf]; nothing is written then. *)

(** {1 The per-second cache}

    A server writes the current time in every response's [Date] field
    (RFC 9110 §6.6.1), and that time changes once a second. A cache keeps
    the 29 formatted bytes of the last second it saw, so the common case
    is a copy of four machine words. One cache per worker: it is mutable
    and not synchronised. *)

module Cache : sig
  type t

  val create : unit -> t
  (** [create ()] is a cache holding the epoch. Allocates (once). *)

  val write : t -> Bigstring.t -> off:int -> now:int -> int
  (** [write c buf ~off ~now] writes the IMF-fixdate for [now] at [off]
      and is [off + 29], exactly as [write_imf_fixdate buf ~off now]. It
      reformats only when [now] differs from the second of the previous
      call. Does not allocate.
      @raise Invalid_argument as {!write_imf_fixdate}. *)
end

val common_log_length : int
(** [28], the length {!write_common_log} writes. *)

val write_common_log : Bigstring.t -> off:int -> int -> int
(** [write_common_log buf ~off t] writes Unix time [t] as the Common Log
    Format timestamp ["[10/Oct/2000:13:55:36 +0000]"] (28 bytes) and is
    [off + 28]. Does not allocate.
    @raise Invalid_argument if [t] is outside [\[0, max_time\]] or the 28
    bytes do not fit. *)
