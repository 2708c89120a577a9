(** Close frames (RFC 6455 §5.5.1, §7.4): status codes, the payload's
    validation, and the writer.

    A Close payload is empty, or a 2-byte big-endian status code followed
    by a UTF-8 reason (so at most 123 bytes of reason). Nothing here
    allocates. *)

(** {1 Status codes} Plain ints: the range 3000-4999 is open to
    libraries and applications, so no variant could list them. *)

val normal : int  (** 1000 *)

val going_away : int  (** 1001 *)

val protocol_error : int  (** 1002 *)

val unsupported_data : int  (** 1003 *)

val no_status : int
(** 1005: reported when a Close frame had no payload; never sent. *)

val abnormal : int  (** 1006: the connection dropped without a Close; never sent. *)

val invalid_payload : int  (** 1007: e.g. invalid UTF-8 in a text message *)

val policy_violation : int  (** 1008 *)

val message_too_big : int  (** 1009 *)

val mandatory_extension : int  (** 1010 *)

val internal_error : int  (** 1011 *)


val is_valid_code : int -> bool
(** [is_valid_code c] is whether [c] may appear in a Close frame on the
    wire: 1000-1003, 1007-1011, 1012-1014 (registered with IANA after the
    RFC: service restart, try again later, bad gateway) and 3000-4999.
    1004 (reserved), 1005, 1006 and 1015 (TLS failure) are only ever
    reported locally, never sent; every other code below 3000 is
    unassigned. Receiving an invalid one is a protocol error (1002). *)

(** {1 Reading} *)

type check =
  | Valid  (** empty, or a valid code and a UTF-8 reason *)
  | Bad_length  (** exactly one byte: 1002 *)
  | Bad_code  (** a code {!is_valid_code} refuses: 1002 *)
  | Bad_reason  (** the reason is not UTF-8: 1007 *)

val check : Bigstring.t -> off:int -> len:int -> check
(** [check buf ~off ~len] validates the (unmasked) payload
    [buf.{off .. off+len-1}]. Unchecked range. *)

val check_close_code : check -> int
(** The status to fail the connection with: 1002 or 1007 ([Valid]: 1000). *)

val code : Bigstring.t -> off:int -> len:int -> int
(** [code buf ~off ~len] is the payload's status code, {!no_status} when
    it is empty (or one byte). *)

(** {1 Writing} *)

val write : Bigstring.t -> off:int -> code:int -> reason:string -> int
(** [write buf ~off ~code ~reason] writes a whole unmasked (server) Close
    frame and returns the offset after it. [code = no_status] writes an
    empty payload (and [reason] must be empty).
    @raise Invalid_argument when [code] is neither {!no_status} nor
    {!is_valid_code}, when [reason] is longer than 123 bytes or not UTF-8,
    or when the frame does not fit. *)
