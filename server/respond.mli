(** Everyday responses in one call each, for handlers written the way
    Dream or Express handlers are.

    {[
      Respond.text c "hello\n";
      Respond.json c ~status:Status.Created {|{"id":1}|};
      Respond.redirect c "/login"                 (* 303 See Other *)
    ]}

    Each function starts the response ({!start}), adds the headers queued
    with {!add_header} (a session's [Set-Cookie], say), writes its own and
    ends it with the body. They allocate nothing beyond what their
    arguments cost, except {!error} and {!redirect} (one string each) and
    {!add_header} (one list cell per header).

    {b Pending headers.} {!add_header} lets code that runs before the
    response exists ({!Session.commit}) give it a header. They are kept
    for the connection slot until {!start} (or any function here) writes
    them, or {!Route.handler} begins the next request on that slot and
    drops them; a handler that starts its response with [Ctx.start]
    instead of {!start} must call {!write_pending} itself. *)

open Httpz

val start : Ctx.t -> Status.t -> unit
(** [start c status] is [Ctx.start c status] followed by the pending
    headers of [c]. *)

val add_header : Ctx.t -> Header_name.t -> string -> unit
(** [add_header c name value] queues a header for the next {!start} on [c].
    The value is checked when written ([Httpz.Response.Invalid_field]
    then, from {!start}). *)

val write_pending : Ctx.t -> unit
(** [write_pending c] writes and forgets the pending headers of [c] into
    the open head. *)

val drop_pending : Ctx.t -> unit
(** [drop_pending c] forgets them (a new request began on [c]). Does not
    allocate when there are none. *)

val text : Ctx.t -> ?status:Status.t -> string -> unit
(** [text c s]: [text/plain; charset=utf-8], status [200] by default. *)

val html : Ctx.t -> ?status:Status.t -> string -> unit
(** [html c s]: [text/html; charset=utf-8]. *)

val json : Ctx.t -> ?status:Status.t -> string -> unit
(** [json c s]: [application/json], [s] sent as given (produce it with any
    JSON library, or by hand; nothing is checked). *)

val empty : Ctx.t -> Status.t -> unit
(** [empty c status]: no body; [Content-Length: 0] unless the status
    forbids content (1xx, 204, 304: no framing field at all). *)

val error : Ctx.t -> Status.t -> unit
(** [error c status]: through the server's error renderer when one is set
    ([Server.config.errors], {!Errors}) with the reason phrase as
    [reason]; else a short text body, ["404 Not Found\n"]. *)

val error_reason : Ctx.t -> Status.t -> string -> unit
(** [error_reason c status reason]: as {!error}, the default body being
    ["403 Forbidden: REASON\n"]; [reason] must not come from the request
    unescaped (it is plain text, but a client may show it; the
    {!Errors.json} and {!Errors.html} renderers escape it for their
    formats). *)

val redirect : Ctx.t -> ?status:Status.t -> string -> unit
(** [redirect c url] answers with [Location: url] and status [303 See
    Other] by default (after a POST, the client GETs [url]: the
    Post/Redirect/Get pattern); [302], [307] or [308] on request.
    [url] must be an absolute path ([/x], not [//host], which a browser
    reads as another host) or an absolute [http:]/[https:] URL, with no
    byte below [0x21] and no DEL.
    @raise Invalid_argument on any other [url] or a non-3xx status. *)

val valid_location : string -> bool
(** [valid_location url] is the check {!redirect} makes. *)
