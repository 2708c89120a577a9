(** Content-Length body tracking
    ({{:https://www.rfc-editor.org/rfc/rfc9112#section-6.3} RFC 9112 §6.3},
    rule 6).

    A body framed by [Content-Length: n] is exactly the next [n] bytes on
    the connection; whatever follows belongs to the next (pipelined)
    request. [Fixed_body] counts those [n] bytes down as the caller reads
    them, so the caller can tell body bytes from the next request's:

    {[
      Fixed_body.start fb (Request.content_length req);
      (* for each slice of [len] bytes read after the head *)
      let k = Fixed_body.take fb ~available:len in
      deliver buf off k;
      if Fixed_body.is_done fb then (* bytes from off + k on: next request *) ...
    ]}

    The length must already be validated ([1*DIGIT], within limits): the
    request parser does that. {b Allocation:} none, except {!create}. *)

type t
(** Caller-owned counter, reusable across requests. *)

val create : unit -> t
(** [create ()] is a tracker with nothing to read ([is_done] holds).
    Allocates. *)

val start : t -> int -> unit
(** [start t n] begins a body of [n] bytes ([n = 0] is done at once).
    @raise Invalid_argument if [n < 0] (e.g. the [-1] meaning "no
    Content-Length": there is no body to track then). *)

val take : t -> available:int -> int
(** [take t ~available] is how many of the next [available] bytes belong
    to the body, [min (remaining t) available], and counts them as read.
    [available = 0] gives [0].
    @raise Invalid_argument if [available < 0]. *)

val remaining : t -> int
(** [remaining t] is the number of body bytes not yet taken. *)

val is_done : t -> bool
(** [is_done t] is [remaining t = 0]. *)
