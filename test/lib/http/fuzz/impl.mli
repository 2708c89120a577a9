(** What one implementation made of one input, in a form all three share.

    Each parser's answer is reduced to a {!result}: it accepted the input as
    a complete request head (with the {!facts} below), it wants more bytes,
    or it refused the input. Byte strings are compared as sent, except
    where the field says otherwise. *)

type facts = {
  meth : string;          (** the method token as sent *)
  target : string;        (** the request-target as sent *)
  version : int * int;    (** (major, minor) *)
  headers : (string * string) list;
      (** each field line: the name as sent, the value without its
          leading and trailing OWS *)
  content_length : string option;
      (** the framing length in canonical decimal (no leading zeros), when
          a Content-Length was accepted *)
  chunked : bool;         (** the body is chunked *)
  keep_alive : bool;      (** the connection may carry another request *)
  head_length : int;      (** bytes of the head, the final CRLF included *)
}

type result =
  | Accept of facts
  | Partial               (** no error so far, the head is not complete *)
  | Reject of string      (** refused; the implementation's own reason *)

type name = Httpz | H11 | Http_parser

val name_to_string : name -> string

val canonical_decimal : string -> string
(** [canonical_decimal s] is the digit string [s] without leading zeros
    (["0"] for all zeros). *)

val trim_ows : string -> string
(** [trim_ows s] is [s] without leading and trailing SP / HTAB. *)

val escape : string -> string
(** [escape s] is [s] as an OCaml/C string literal body: printable ASCII
    as is, everything else as [\r], [\n], [\t] or [\xHH]. Reversible with
    {!unescape}, so a finding printed with it can be pasted back. *)

val unescape : string -> string
(** The inverse of {!escape}. @raise Invalid_argument on a bad escape. *)

val pp_result : Format.formatter -> result -> unit
val facts_diff : facts -> facts -> string list
(** [facts_diff a b] names the fields of {!facts} on which [a] and [b]
    differ ([[]] when equal). *)

(** {1 The three implementations} *)

val httpz_limits : Httpz.Request.limits
(** The limits the comparison runs Httpz.Request with: the defaults but
    [max_content_length = max_int], because a body-size policy is not
    grammar. The default 1 GiB limit is checked separately by the
    self-consistency checks of {!Diff}. *)

val of_httpz : Httpz.Request.t -> Httpz.Bigstring.t -> Httpz.Request.status -> result
(** [of_httpz t buf status] reads the result of a {!Httpz.Request.parse}
    of [buf] that returned [status]. *)

val httpz : string -> result
(** [httpz s] parses [s] with a fresh state, embedded in a larger buffer. *)

val http_parser : string -> result
(** [http_parser s] is Node's http_parser's verdict on [s].
    @raise Failure if the harness was built without http_parser. *)

val http_parser_available : unit -> bool

val embed : off:int -> garbage:char -> string -> Httpz.Bigstring.t
(** [embed ~off ~garbage s] is a buffer holding [s] at [off], [off] bytes of
    [garbage] before it and 64 after. *)
