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
    {!add_header} (one list cell per header). An omitted [?headers] costs
    nothing; a given one costs the caller its list and the [Some] around
    it, so a handler meant to allocate nothing passes a preallocated
    option: [let cache = Some [ (Header_name.Cache_control, "no-store") ]]
    at top level, then [Respond.text c ?headers:cache s].

    {b Extra headers.} [?headers] on {!text}, {!html}, {!json}, {!empty}
    and {!redirect} adds [(name, value)] fields, in order, after the
    pending ones: [Respond.json c ~headers:[ (Cache_control, "no-store") ] s].
    A [Content_type] among them replaces the function's own (so
    [Respond.text c ~headers:[ (Content_type, "text/csv") ] s] sends CSV).
    Names are {!Httpz.Header_name.t}: a field httpz has no constructor for
    ([Other]) cannot be written this way ([Httpz.Response.Invalid_field],
    hence a 500): queue it with {!add_header_s}. Framing fields
    ([Content-Length], [Transfer-Encoding], [Connection]) are the
    server's; do not pass them.

    {b Pending headers.} {!add_header} lets code that runs before the
    response exists ({!Session.commit}) give it a header. They are kept
    for the request until {!start} (or any function here) writes them; a
    handler that starts its response with [Ctx.start] instead of {!start}
    must call {!write_pending} itself. Those of a request that ended
    without writing them (its handler raised, or answered through [Ctx])
    are never written into a later response on the same slot. *)

open Httpz

val start : Ctx.t -> Status.t -> unit
(** [start c status] is [Ctx.start c status] followed by the pending
    headers of [c]. *)

val add_header : Ctx.t -> Header_name.t -> string -> unit
(** [add_header c name value] queues a header for the next {!start} on [c].
    The value is checked when written ([Httpz.Response.Invalid_field]
    then, from {!start}). *)

val add_header_s : Ctx.t -> string -> string -> unit
(** [add_header_s c "x-request-id" v] is {!add_header} for a field named
    by a string (any case): one httpz knows is queued as its
    {!Httpz.Header_name.t}, any other with this spelling. The name is
    checked when written, as the value is. *)

val pending_header : Ctx.t -> Httpz.Header_name.t -> string option
(** [pending_header c name] is the value of the first header queued for
    [c]'s next response under [name] and not yet written ({!add_header},
    {!add_header_s}, {!Session.commit}'s [Set-Cookie]), or [None]: how code
    that runs before the response (a middleware's "before" step, a
    handler) reads what it or others set. Fields already written into the
    head are not kept and cannot be read back. *)

val pending_header_s : Ctx.t -> string -> string option
(** As {!pending_header}, the name as a string (any case). *)

val write_pending : Ctx.t -> unit
(** [write_pending c] writes and forgets the pending headers of [c] into
    the open head. *)

val drop_pending : Ctx.t -> unit
(** [drop_pending c] forgets those queued for [c], this request's too.
    Does not allocate when there are none. (Nothing needs to call it
    between requests: those of an ended request are never written.) *)

val text : Ctx.t -> ?status:Status.t -> ?headers:(Header_name.t * string) list -> string -> unit
(** [text c s]: [text/plain; charset=utf-8], status [200] by default. *)

val html : Ctx.t -> ?status:Status.t -> ?headers:(Header_name.t * string) list -> string -> unit
(** [html c s]: [text/html; charset=utf-8]. *)

val json : Ctx.t -> ?status:Status.t -> ?headers:(Header_name.t * string) list -> string -> unit
(** [json c s]: [application/json], [s] sent as given (produce it with any
    JSON library, or by hand; nothing is checked). *)

val empty : Ctx.t -> ?headers:(Header_name.t * string) list -> Status.t -> unit
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

val redirect : Ctx.t -> ?status:Status.t -> ?headers:(Header_name.t * string) list -> string -> unit
(** [redirect c url] answers with [Location: url] and status [303 See
    Other] by default (after a POST, the client GETs [url]: the
    Post/Redirect/Get pattern); [302], [307] or [308] on request.
    [url] must be an absolute path ([/x], not [//host], which a browser
    reads as another host) or an absolute [http:]/[https:] URL, with no
    byte below [0x21] and no DEL.
    @raise Invalid_argument on any other [url] or a non-3xx status. *)

val valid_location : string -> bool
(** [valid_location url] is the check {!redirect} makes. *)
