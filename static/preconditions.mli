(** Conditional requests (RFC 9110 §13.2.2): the order in which the
    precondition fields are evaluated, and If-Range (§13.1.5). *)

type decision = Proceed | Send_304 | Send_412

val fields : Httpz.Request.t -> int
(** [fields req] says in one pass over the field names which of the
    fields the file answer looks at are present: a set of the bits below.
    A bit clear means the field is absent, so the work it gates can be
    skipped (a bit set only says "look", the value may still be
    unusable). Does not allocate. *)

val has_accept_encoding : int
(** [Accept-Encoding]. *)

val has_range : int
(** [Range]. *)

val has_conditional : int
(** [If-Match], [If-None-Match], [If-Modified-Since] or
    [If-Unmodified-Since]: without any, {!preconditions} is [Proceed].
    ([If-Range] matters only with [Range], which {!if_range_holds} finds
    itself.) *)

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
