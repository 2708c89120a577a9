(** Conditional requests (RFC 9110 §13.2.2): the order in which the
    precondition fields are evaluated, and If-Range (§13.1.5). *)

type decision = Proceed | Send_304 | Send_412

val preconditions :
  Httpz_server.Ctx.t -> Httpz.Request.t -> Httpz.Bigstring.t -> string -> int -> decision
(** [preconditions c req buf etag mtime] for a representation with entity
    tag [etag] and modification time [mtime] (Unix seconds): [If-Match]
    (or, without it, [If-Unmodified-Since]) failing gives 412; then
    [If-None-Match] (or, without it, [If-Modified-Since]) matching gives
    304. A date field given twice is no date and is ignored. Does not
    allocate. *)

val if_range_holds :
  Httpz_server.Ctx.t -> Httpz.Request.t -> Httpz.Bigstring.t -> string -> int -> bool
(** [if_range_holds c req buf etag mtime]: honour [Range] only when there
    is no [If-Range], or its strong entity tag or exact date still holds. *)
