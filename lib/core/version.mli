(** HTTP versions httpz speaks (RFC 9112 §2.3).

    A request whose major version is 1 and minor version is 2 or more is
    treated as HTTP/1.1, as RFC 9110 §2.5 asks of a recipient; any other
    major version is refused with 505. *)

type t =
  | Http_1_0
  | Http_1_1
  | Http_2
      (** an HTTP/2 stream's request ({!Request.build_start} given it):
          never a parse's result, since an HTTP/1.x request line naming
          version 2 is refused *)

val to_string : t -> string
(** ["HTTP/1.0"], ["HTTP/1.1"] or ["HTTP/2"]. *)
