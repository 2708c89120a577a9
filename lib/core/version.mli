(** HTTP versions httpz speaks (RFC 9112 §2.3).

    A request whose major version is 1 and minor version is 2 or more is
    treated as HTTP/1.1, as RFC 9110 §2.5 asks of a recipient; any other
    major version is refused with 505. *)

type t = Http_1_0 | Http_1_1

val to_string : t -> string
(** ["HTTP/1.0"] or ["HTTP/1.1"]. *)
