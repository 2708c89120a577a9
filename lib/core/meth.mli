(** Request methods (RFC 9110 §9).

    The registered methods are constant constructors, so comparing or
    storing one costs nothing. Any other token is [Other]: its bytes are the
    method span of the request ({!Request.meth_span}). Methods are
    case-sensitive: [get] is an [Other] method, not [Get]. *)

type t =
  | Get | Head | Post | Put | Delete | Connect | Options | Trace | Patch
  | Other  (** a valid token that is none of the above *)

val to_string : t -> string
(** [to_string m] is the method's name as sent on the wire; ["OTHER"] for
    [Other] (read the request's method span for the actual token). *)

val of_string : string -> t
(** [of_string s] is the registered method spelled exactly [s], else [Other]. *)

val of_buffer : Bigstring.t -> off:int -> len:int -> t
(** [of_buffer b ~off ~len] is {!of_string} on bytes of a buffer, without
    allocating. *)

val is_safe : t -> bool
(** [is_safe m] is [true] for GET, HEAD, OPTIONS and TRACE (RFC 9110 §9.2.1). *)
