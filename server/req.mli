(** The request, read the easy way: decoded path, query parameters,
    header values, the whole body and form fields as OCaml strings.

    Every function here allocates its result (that is the convenience);
    the zero-allocation way is {!Ctx.request} with {!Httpz.Target},
    {!Httpz.Form} and {!Httpz.Request}. They use one scratch state per
    worker, so call them from the handler or a continuation on the
    worker's loop, never from an {!Ctx.offload}ed function. The typed
    header and media-type functions below ({!header_span},
    {!has_header}, {!content_type_is}, {!is_json}, {!accepts},
    {!negotiate}) are the exception: they allocate nothing. *)

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

val header_of : Ctx.t -> Httpz.Header_name.t -> string option
(** [header_of c Header_name.Authorization] is the value of the first
    field with that name, as sent; the typed twin of {!header} (a
    constructor compare per field, no name bytes compared). *)

val header_span : Ctx.t -> Httpz.Header_name.t -> Httpz.Span.t
(** [header_span c name] is that value as a span of {!Ctx.buffer}
    ({!Httpz.Span.empty} when absent: tell an absent field from an empty
    one with {!has_header}). Does not allocate. *)

val has_header : Ctx.t -> Httpz.Header_name.t -> bool
(** Does not allocate. *)

val headers_of : Ctx.t -> Httpz.Header_name.t -> string list
(** [headers_of c name] is the value of every field line called [name],
    in order ([[]] when absent): for fields that may repeat, such as
    [Accept] or [Forwarded]. *)

(** {1 Media types} Zero allocation; see {!Httpz.Media_type}. *)

val content_type_is : Ctx.t -> string -> bool
(** [content_type_is c "application/json"]: the request's [Content-Type]
    has that [type/subtype], ignoring case and parameters
    ([application/json; charset=utf-8] is [application/json]); [false]
    without a [Content-Type]. *)

val is_json : Ctx.t -> bool
(** The [Content-Type] is [application/json], [text/json] or a [+json]
    type ({!Httpz.Media_type.is_json}). *)

val accepts : Ctx.t -> string -> int
(** [accepts c "text/html"] is the weight, [0] to [1000], the request's
    [Accept] fields give that type ({!Httpz.Media_type.accepts_request}:
    [1000] without [Accept]; [0] is a refusal). *)

val negotiate : Ctx.t -> string array -> int
(** [negotiate c [| "application/json"; "text/html" |]] is the index of
    the offered type the client prefers, the earliest on a tie (so list
    yours first), [0] when the request has no [Accept], [-1] when it
    accepts none of them: answer [406 Not Acceptable], or the default
    (RFC 9110 §12.5.1 allows both). Keep the array in a top-level value:
    built per request it is an allocation. *)

(** {1 JSON bodies}
    With any JSON library: httpz parses nothing itself.
    {[
      Route.post r "/todos" (fun c ->
          Req.json c ~parse:todo_of_string (fun c todo -> Respond.json c ~status:Created (save todo)))
    ]} *)

val default_json_limit : int
(** 1 MiB. *)

val json : Ctx.t -> ?limit:int -> parse:(string -> ('a, string) result) -> (Ctx.t -> 'a -> unit) -> unit
(** [json c ~parse k] reads the request's JSON body and calls [k c v]
    with [v] from [parse body]. Call it from the handler, and return
    after it: the body may not be there yet, and [k] runs once it is.
    Answers for you, through {!Respond.error_reason}:
    {ul
    {- [415 Unsupported Media Type] when the [Content-Type] is not a JSON
       type ({!is_json}; charset and other parameters are ignored), or is
       missing, before a byte of the body is read;}
    {- [413 Content Too Large] when the body is over [limit] bytes
       (default {!default_json_limit}; a [Content-Length] over it is
       refused before reading, a chunked body as soon as it passes it,
       and the connection is closed);}
    {- [400 Bad Request] when [parse] returns [Error msg] (the answer
       says ["malformed JSON body: msg"], the message cut to 200 bytes
       and control bytes blanked: keep it free of secrets) or raises
       (["malformed JSON body"], the exception is not shown).}}
    An empty body is given to [parse] as [""]. The body is read with
    {!Ctx.read_body} piece by piece into one string (allocates: this is
    the convenient way), unless it arrived whole with the head. When [k]
    runs later than the handler's synchronous call, route parameters
    cannot be read there ({!Route.param}): read them before calling
    [json]. *)

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
