(** The request, read the easy way: decoded path, query parameters,
    header values, the whole body and form fields as OCaml strings.

    Every function here allocates its result (that is the convenience);
    the zero-allocation way is {!Ctx.request} with {!Httpz.Target},
    {!Httpz.Form} and {!Httpz.Request}. They use one scratch state per
    worker, so call them from the handler or a continuation on the
    worker's loop, never from an {!Ctx.offload}ed function. *)

val meth : Ctx.t -> Httpz.Meth.t

val path : Ctx.t -> string
(** [path c] is the request path percent-decoded and normalised
    ({!Httpz.Target.decode_path}: [/a/./b/../c] is [/a/c], [%2F] a ['/'],
    ['+'] stays ['+']), without the query; the raw target when it cannot
    be decoded (a malformed target never reaches a handler through
    {!Route}, which answers it 400). *)

val query : Ctx.t -> string -> string option
(** [query c name] is the first value of [name] in the query string,
    decoded as a form ([+] is a space, [%XX] a byte); [None] when absent.
    A name without [=] has the value [""]. *)

val queries : Ctx.t -> (string * string) list
(** Every query pair, decoded, in order. *)

val header : Ctx.t -> string -> string option
(** [header c name] is the value of the first field called [name] (any
    case), as sent. *)

val cookie : Ctx.t -> string -> string option
(** [cookie c name] is the value of the first cookie named [name]. *)

val body_string : Ctx.t -> string
(** [body_string c] is the whole body (bounded by [Server.config.max_body]).
    @raise Invalid_argument unless {!Ctx.body_ready}: call
    {!Ctx.await_body} first, or use a form route of {!Route}, which waits
    for the body before calling its handler. *)

val form : Ctx.t -> (string * string) list
(** [form c] is the [application/x-www-form-urlencoded] body's fields,
    decoded, in order (whatever the [Content-Type] says: the caller chose
    a form route). Same precondition as {!body_string}. *)

val form_field : Ctx.t -> string -> string option
(** [form_field c name] is the first value of field [name] of the body. *)
